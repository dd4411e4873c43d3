//! The probe's figure: three panels after PASS's Figs. 1-3, as a self-contained SVG. Written
//! from the JSON alone with fixed number formats, so the same JSON always gives the same bytes.

use std::fmt::Write as _;

use flashlane_core::device::ProbeOperation;

use crate::probe::ProbeReport;

const COLORS: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];
const PANEL_W: f64 = 420.0;
const PLOT_H: f64 = 240.0;
const LEFT: f64 = 62.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 40.0;
/// Below the plot: tick labels and the axis title, then the legend's rows.
const UNDER: f64 = 50.0;
const LEGEND_ROW: f64 = 15.0;

struct Series {
    label: String,
    points: Vec<(f64, f64)>,
    dashed: bool,
    /// Index into [`COLORS`] (a read and a write of one region share their color).
    color: usize,
}

struct Panel {
    title: String,
    x_label: &'static str,
    log2_x: bool,
    series: Vec<Series>,
}

fn mib(bytes: u64) -> String {
    if bytes >= 1 << 30 && bytes.is_multiple_of(1 << 30) {
        format!("{} GiB", bytes >> 30)
    } else {
        format!("{} MiB", bytes as f64 / (1u64 << 20) as f64)
    }
}

/// A step of 1, 2 or 5 times a power of ten giving about five ticks up to `max`.
fn nice_step(max: f64) -> f64 {
    let raw = (max / 5.0).max(1e-9);
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * power)
}

fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn draw(out: &mut String, x0: f64, panel: &Panel) {
    let (w, h) = (PANEL_W - LEFT - RIGHT, PLOT_H);
    let (ox, oy) = (x0 + LEFT, TOP + h);
    let xs: Vec<f64> = panel
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    let fx = |x: f64| if panel.log2_x { x.max(1e-9).log2() } else { x };
    let (lo, hi) = xs.iter().fold((f64::MAX, f64::MIN), |(lo, hi), x| {
        (lo.min(fx(*x)), hi.max(fx(*x)))
    });
    let (lo, hi) = if lo < hi {
        (lo, hi)
    } else {
        (lo - 1.0, lo + 1.0)
    };
    let y_max = panel
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0f64, f64::max);
    let step = nice_step(y_max.max(1e-6));
    let y_top = (y_max / step).ceil().max(1.0) * step;
    let px = |x: f64| ox + (fx(x) - lo) / (hi - lo) * w;
    let py = |y: f64| oy - y / y_top * h;
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="22" font-size="14" text-anchor="middle">{}</text>"#,
        ox + w / 2.0,
        esc(&panel.title)
    );
    let _ = writeln!(
        out,
        r##"<rect x="{ox:.1}" y="{TOP:.1}" width="{w:.1}" height="{h:.1}" fill="none" stroke="#444"/>"##
    );
    // Y ticks and grid.
    let mut y = 0.0;
    while y <= y_top + step / 2.0 {
        let _ = writeln!(
            out,
            r##"<line x1="{ox:.1}" y1="{0:.1}" x2="{1:.1}" y2="{0:.1}" stroke="#ddd"/><text x="{2:.1}" y="{3:.1}" font-size="11" text-anchor="end">{4}</text>"##,
            py(y),
            ox + w,
            ox - 5.0,
            py(y) + 4.0,
            y
        );
        y += step;
    }
    // X ticks at the first series' points (they share their x values).
    let mut ticks: Vec<f64> = xs.clone();
    ticks.sort_by(f64::total_cmp);
    ticks.dedup();
    for x in ticks {
        let label = if x >= 1024.0 && panel.log2_x {
            format!("{}K", x / 1024.0)
        } else {
            format!("{x}")
        };
        let _ = writeln!(
            out,
            r##"<line x1="{0:.1}" y1="{oy:.1}" x2="{0:.1}" y2="{1:.1}" stroke="#444"/><text x="{0:.1}" y="{2:.1}" font-size="11" text-anchor="middle">{label}</text>"##,
            px(x),
            oy + 4.0,
            oy + 16.0
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">{}</text>"#,
        ox + w / 2.0,
        oy + 32.0,
        panel.x_label
    );
    let _ = writeln!(
        out,
        r#"<text x="{0:.1}" y="{1:.1}" font-size="12" text-anchor="middle" transform="rotate(-90 {0:.1} {1:.1})">MiB/s</text>"#,
        x0 + 16.0,
        TOP + h / 2.0
    );
    for (i, s) in panel.series.iter().enumerate() {
        let color = COLORS[s.color % COLORS.len()];
        let path: Vec<String> = s
            .points
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y)))
            .collect();
        let dash = if s.dashed {
            r#" stroke-dasharray="5,3""#
        } else {
            ""
        };
        let _ = writeln!(
            out,
            r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="1.8"{dash}/>"#,
            path.join(" ")
        );
        for (x, y) in &s.points {
            let _ = writeln!(
                out,
                r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{color}"/>"#,
                px(*x),
                py(*y)
            );
        }
        // Legend below the axes, two columns.
        let (col, row) = (i % 2, i / 2);
        let lx = ox + col as f64 * (w / 2.0);
        let ly = oy + UNDER + row as f64 * LEGEND_ROW;
        let _ = writeln!(
            out,
            r#"<line x1="{lx:.1}" y1="{0:.1}" x2="{1:.1}" y2="{0:.1}" stroke="{color}" stroke-width="2"{dash}/><text x="{2:.1}" y="{3:.1}" font-size="11">{4}</text>"#,
            ly - 4.0,
            lx + 18.0,
            lx + 22.0,
            ly,
            esc(&s.label)
        );
    }
}

fn op_name(op: ProbeOperation) -> &'static str {
    match op {
        ProbeOperation::Read => "read",
        ProbeOperation::Write => "write",
    }
}

/// The figure of `report`.
pub fn svg(report: &ProbeReport) -> String {
    let sizes = Panel {
        title: format!(
            "Fig. 1: sequential vs random ({} outstanding)",
            report.settings.sizes_and_mixes_outstanding_requests
        ),
        x_label: "request size (bytes)",
        log2_x: true,
        series: report
            .sizes
            .iter()
            .map(|c| Series {
                label: format!("{} {}", c.pattern, op_name(c.operation)),
                points: c
                    .points
                    .iter()
                    .map(|p| (p.request_bytes as f64, p.measured.mib_per_s))
                    .collect(),
                dashed: c.operation == ProbeOperation::Write,
                color: usize::from(c.pattern != "sequential"),
            })
            .collect(),
    };
    let regions = &report.settings.region_bytes;
    let parallelism = Panel {
        title: format!(
            "Fig. 2: random {} B requests in a region",
            report.settings.block_bytes
        ),
        x_label: "outstanding requests",
        log2_x: true,
        series: report
            .parallelism
            .iter()
            .map(|c| Series {
                label: format!("{} {}", op_name(c.operation), mib(c.region_bytes)),
                points: c
                    .points
                    .iter()
                    .map(|p| (f64::from(p.outstanding_requests), p.mib_per_s))
                    .collect(),
                dashed: c.operation == ProbeOperation::Write,
                color: regions
                    .iter()
                    .position(|r| *r == c.region_bytes)
                    .unwrap_or(0),
            })
            .collect(),
    };
    let interference = Panel {
        title: "Fig. 3: read/write interference".into(),
        x_label: "share of the second kind (%)",
        log2_x: false,
        series: report
            .interference
            .iter()
            .enumerate()
            .map(|(i, c)| Series {
                label: c.mix.replace('_', " "),
                points: c
                    .points
                    .iter()
                    .map(|p| (f64::from(p.second_percent), p.measured.mib_per_s))
                    .collect(),
                dashed: false,
                color: i,
            })
            .collect(),
    };
    let panels: Vec<&Panel> = [&sizes, &parallelism, &interference]
        .into_iter()
        .filter(|p| !p.series.is_empty())
        .collect();
    let rows = panels
        .iter()
        .map(|p| p.series.len().div_ceil(2))
        .max()
        .unwrap_or(0);
    let height = TOP + PLOT_H + UNDER + rows as f64 * LEGEND_ROW + 10.0;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{:.0}" height="{height:.0}" font-family="sans-serif">"#,
        PANEL_W * panels.len() as f64
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    for (i, panel) in panels.iter().enumerate() {
        draw(&mut out, PANEL_W * i as f64, panel);
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{Measured, MixCurve, MixPoint, ProbeSettings, SizeCurve, SizePoint};
    use flashlane_core::device::{CurvePoint, ParallelismCurve};

    fn report(interference: bool) -> ProbeReport {
        let m = |x: f64| Measured {
            requests: 10,
            iops: x * 256.0,
            mib_per_s: x,
            mean_latency_us: 100.0,
        };
        let curve = |op, region| {
            let points = [1u32, 2, 4]
                .iter()
                .map(|&k| CurvePoint {
                    outstanding_requests: k,
                    requests: 10,
                    iops: 1.0,
                    mib_per_s: f64::from(k) * 10.0,
                    mean_latency_us: 1.0,
                })
                .collect();
            ParallelismCurve::new(op, region, 4096, points)
        };
        ProbeReport {
            schema_version: 1,
            target: serde_json::json!({"path": "x"}),
            settings: ProbeSettings {
                point_ms: 1,
                warmup_ms: 0,
                block_bytes: 4096,
                outstanding_requests: vec![1, 2, 4],
                region_bytes: vec![1 << 20, 2 << 20],
                request_bytes: vec![4096, 8192],
                mix_percent: vec![0, 100],
                sizes_and_mixes_outstanding_requests: 8,
                seed: 1,
                reads_only: !interference,
            },
            parallelism: vec![
                curve(ProbeOperation::Read, 1 << 20),
                curve(ProbeOperation::Write, 2 << 20),
            ],
            sizes: vec![SizeCurve {
                operation: ProbeOperation::Read,
                pattern: "random".into(),
                points: vec![
                    SizePoint {
                        request_bytes: 4096,
                        measured: m(5.0),
                    },
                    SizePoint {
                        request_bytes: 8192,
                        measured: m(9.0),
                    },
                ],
            }],
            interference: if interference {
                vec![MixCurve {
                    mix: "seq_read+rand_write".into(),
                    points: vec![
                        MixPoint {
                            second_percent: 0,
                            measured: m(7.0),
                        },
                        MixPoint {
                            second_percent: 100,
                            measured: m(3.0),
                        },
                    ],
                }]
            } else {
                Vec::new()
            },
            wall_s: 1.0,
        }
    }

    #[test]
    fn one_panel_per_measured_figure_and_the_same_bytes_every_time() {
        let full = svg(&report(true));
        assert_eq!(full, svg(&report(true)));
        assert_eq!(full.matches("<polyline").count(), 4);
        assert!(full.contains(r#"width="1260""#), "three panels");
        // A write curve is dashed; a reads-only probe has no interference panel.
        assert_eq!(full.matches("stroke-dasharray").count(), 2);
        let reads = svg(&report(false));
        assert!(reads.contains(r#"width="840""#) && !reads.contains("Fig. 3"));
    }
}
