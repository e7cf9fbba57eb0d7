//! The guest's records as a `wbsim::report::RunReport`.
//! STUB until the real module is merged.

pub struct GuestRun {
    pub report: wbsim::report::RunReport,
    pub kernel_release: String,
    pub zones: Vec<wbsim::report::LabZone>,
    pub trace_text: String,
    pub log: Vec<String>,
    pub error: Option<String>,
}

pub fn guest_run(
    _sc: &wbsim::scenario::Scenario,
    _records: &[wbsim_guest::protocol::Record],
    _seed: u64,
    _sample_ms: u64,
) -> Result<GuestRun, String> {
    Err("stub".into())
}
