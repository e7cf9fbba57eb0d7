//! Real against simulated, figure by figure. STUB until merged.
pub struct Figure {
    pub name: String,
    pub real: Vec<f64>,
    pub simulated: Vec<f64>,
}
pub fn figures(_r: &[wbsim::report::RunReport], _s: &[wbsim::report::RunReport]) -> Vec<Figure> {
    Vec::new()
}
pub fn render(_f: &[Figure], _t: f64, _a: &str, _b: &str) -> String {
    String::new()
}
