//! Dirty pages per zone over simulated time, drawn as SVG and PNG: the
//! picture that shows whether a kernel keeps each zone under its share of
//! the dirty limit (the point of per-zone dirty limits).

use std::path::{Path, PathBuf};
use std::sync::Once;

use image::ImageEncoder as _;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};
use wbsim::report::series::Series;

const SIZE: (u32, u32) = (1200, 900);
/// Family under which the embedded DejaVu Sans is registered; every text
/// style uses it, because the CI machine may have no system fonts at all.
const FONT: &str = "sans-serif";
const COLOURS: [RGBColor; 6] = [
    RGBColor(214, 39, 40),
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
];
const LIMIT_COLOUR: RGBColor = RGBColor(128, 128, 128);

/// Draw each zone's dirty pages over time, one panel per zone, one line per kernel run,
/// plus each zone's per-zone dirty limit (dashed/thin grey, from the first run) for reference.
/// Returns the picture as SVG text and as PNG bytes; the caller writes
/// both with the command's other outputs (`output::Outputs`).
///
/// Zones are those of the first run, matched by name in the others. A run
/// without samples draws no line (its legend entry remains), so a run
/// that produced nothing still yields a readable, empty plot.
pub fn render_dirty_plot(
    title: &str,
    runs: &[(&str, &Series)],
) -> Result<(String, Vec<u8>), String> {
    register_embedded_font();

    let mut svg = String::new();
    let area = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
    draw(area, title, runs, false)?;

    let mut rgb = vec![0u8; SIZE.0 as usize * SIZE.1 as usize * 3];
    draw(
        BitMapBackend::with_buffer(&mut rgb, SIZE).into_drawing_area(),
        title,
        runs,
        true,
    )?;
    let mut png = Vec::new();
    image::codecs::png::PngEncoder::new(&mut png)
        .write_image(&rgb, SIZE.0, SIZE.1, image::ColorType::Rgb8)
        .map_err(|e| format!("encoding PNG: {e}"))?;
    Ok((svg, png))
}

/// Render the plot and hand its SVG and PNG to the planned `--plot` and
/// `--plot (PNG)` outputs.
pub fn put_plot(
    outputs: &mut crate::output::Outputs,
    id: crate::output::OutputId,
    title: &str,
    runs: &[(&str, &Series)],
) -> Result<(), String> {
    let (svg, png) = render_dirty_plot(title, runs)?;
    outputs.put(id, svg.as_bytes())?;
    let png_id = outputs
        .id("--plot (PNG)")
        .ok_or("--plot: no PNG output planned")?;
    outputs.put(png_id, &png)
}

/// Where the PNG beside `svg_path` goes; an error if that would be
/// `svg_path` itself. Checked before any simulation runs.
pub fn png_path_for(svg_path: &Path) -> Result<PathBuf, String> {
    let png_path = svg_path.with_extension("png");
    if png_path == svg_path {
        return Err(format!("{}: must not end in .png", svg_path.display()));
    }
    Ok(png_path)
}

/// plotters' ab_glyph text backend only knows registered fonts.
fn register_embedded_font() {
    static ONCE: Once = Once::new();
    // The font is compiled in and known to parse; were it ever rejected,
    // drawing fails with "FontUnavailable", which reaches the caller as Err.
    ONCE.call_once(|| {
        let _ = register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
    });
}

/// Points of one line in seconds and pages, dropping samples equal to both
/// neighbours: the limit is mostly flat, and this keeps the SVG small
/// without changing the drawn shape.
fn line(
    s: &Series,
    zone: &str,
    value: impl Fn(&wbsim::report::series::ZoneSample) -> u64,
) -> Vec<(f64, u64)> {
    let Some(z) = s.zone_names.iter().position(|n| n == zone) else {
        return Vec::new();
    };
    let pts: Vec<(f64, u64)> = s
        .samples
        .iter()
        .filter_map(|smp| Some((smp.time_ns as f64 / 1e9, value(smp.zones.get(z)?))))
        .collect();
    let n = pts.len();
    (0..n)
        .filter(|&i| i == 0 || i + 1 == n || pts[i - 1].1 != pts[i].1 || pts[i + 1].1 != pts[i].1)
        .map(|i| pts[i])
        .collect()
}

/// Draws the whole picture. `segmented` draws each line as separate
/// segments: plotters' bitmap rasterizer turns a wide polyline into one
/// polygon whose miter joins spike far out of the panel where dirty pages
/// drop sharply; separate segments have no joins. SVG keeps one polyline.
fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    runs: &[(&str, &Series)],
    segmented: bool,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("drawing plot: {e}");
    let first = runs.first().ok_or("no runs to plot")?.1;
    if first.zone_names.is_empty() {
        return Err("series has no zones to plot".into());
    }
    let x_max = runs
        .iter()
        .filter_map(|(_, s)| s.samples.last())
        .map(|s| s.time_ns as f64 / 1e9)
        .fold(0.0, f64::max);
    let x_max = if x_max > 0.0 { x_max } else { 1.0 };
    let x_decimals = if x_max >= 20.0 { 0 } else { 1 };
    let limit_style = LIMIT_COLOUR.stroke_width(1);
    let styles: Vec<ShapeStyle> = (0..runs.len())
        .map(|i| COLOURS[i % COLOURS.len()].stroke_width(2))
        .collect();

    root.fill(&WHITE).map_err(err)?;
    let body = root
        .margin(10, 0, 10, 20)
        .titled(title, (FONT, 26))
        .map_err(err)?;
    // A legend strip of its own, so that the key never hides data.
    let (legend, body) = body.split_vertically(30);
    let entries = std::iter::once(("per-zone dirty limit", limit_style))
        .chain(runs.iter().map(|r| r.0).zip(styles.iter().copied()));
    let mut x = 90;
    for (i, (text, style)) in entries.enumerate() {
        let font = TextStyle::from((FONT, 15).into_font());
        let (dash, gap) = if i == 0 { (6, 4) } else { (30, 0) };
        let sample = DashedPathElement::new([(x, 12), (x + 30, 12)], dash, gap, style);
        legend.draw(&sample).map_err(err)?;
        legend
            .draw(&Text::new(text, (x + 38, 4), font.clone()))
            .map_err(err)?;
        x += 38 + legend.estimate_text_size(text, &font).map_err(err)?.0 as i32 + 30;
    }

    let panels = body.split_evenly((first.zone_names.len(), 1));
    for (zone, panel) in first.zone_names.iter().zip(&panels) {
        let limit = line(first, zone, |z| z.dirty_limit_pages);
        let dirty: Vec<_> = runs
            .iter()
            .map(|(_, s)| line(s, zone, |z| z.dirty_pages))
            .collect();
        let y_max = dirty
            .iter()
            .chain([&limit])
            .flatten()
            .map(|p| p.1)
            .max()
            .unwrap_or(0);
        // Integer pages on the axis: ticks stay whole even when y_max is 1.
        let y_max = if y_max > 0 { y_max + y_max / 10 + 1 } else { 1 };

        let mut chart = ChartBuilder::on(panel)
            .caption(zone, (FONT, 18))
            .margin(6)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(0.0..x_max, 0..y_max)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc("dirty pages")
            .x_label_formatter(&|v| format!("{v:.x_decimals$}"))
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 15))
            .light_line_style(RGBColor(238, 238, 238))
            .draw()
            .map_err(err)?;

        chart
            .draw_series(DashedLineSeries::new(limit, 6, 4, limit_style))
            .map_err(err)?;
        for (pts, style) in dirty.iter().zip(&styles) {
            if segmented {
                let segs = pts
                    .windows(2)
                    .map(|w| PathElement::new([w[0], w[1]], *style));
                chart.draw_series(segs).map_err(err)?;
            } else {
                chart
                    .draw_series(LineSeries::new(pts.iter().copied(), *style))
                    .map_err(err)?;
            }
        }
    }
    root.present().map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wbsim::report::series::{Sample, ZoneSample};

    const ZONES: [&str; 3] = ["DMA", "DMA32", "Normal"];

    /// A run whose dirty pages ramp up and saw-tooth as writeback catches up.
    fn synthetic(scale: u64, samples: u64) -> Series {
        let interval_ns = 200_000_000;
        Series {
            zone_names: ZONES.iter().map(|s| s.to_string()).collect(),
            interval_ns,
            samples: (0..samples)
                .map(|i| Sample {
                    time_ns: i * interval_ns,
                    kswapd_awake: i % 7 == 0,
                    zones: (1..=3u64)
                        .map(|z| ZoneSample {
                            dirty_pages: (i * scale * z) % (900 * z * z) + 10 * z,
                            dirty_limit_pages: 700 * z * z + i / 50,
                            ..ZoneSample::default()
                        })
                        .collect(),
                    bdis: vec![],
                })
                .collect(),
            bdi_names: vec![],
            first_workload_exit_ns: None,
            dirty_per_node: false,
        }
    }

    #[test]
    fn plot_renders_svg_and_png() {
        let (a, b) = (synthetic(3, 3000), synthetic(1, 2500));
        let runs = [("3.0-vanilla", &a), ("3.0+per-zone-dirty", &b)];
        let (svg, png) = render_dirty_plot("dirty pages per zone", &runs).unwrap();
        assert!(svg.contains("<svg"));
        for text in ZONES.iter().chain(&["3.0-vanilla", "3.0+per-zone-dirty"]) {
            assert!(svg.contains(text), "SVG lacks {text}");
        }
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
        let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
        assert_eq!((width, height), SIZE);
    }

    /// A run without samples still gives a plot (axes, captions, legend).
    #[test]
    fn plot_of_empty_series_is_valid() {
        let empty = Series {
            zone_names: ZONES.iter().map(|s| s.to_string()).collect(),
            ..Series::default()
        };
        let (svg, png) = render_dirty_plot("empty", &[("3.0-vanilla", &empty)]).unwrap();
        assert!(svg.contains("Normal"));
        assert!(!png.is_empty());
    }

    #[test]
    fn plot_without_runs_or_zones_is_an_error() {
        assert!(render_dirty_plot("t", &[]).is_err());
        assert!(render_dirty_plot("t", &[("k", &Series::default())]).is_err());
    }
}
