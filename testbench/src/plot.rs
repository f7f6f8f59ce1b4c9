//! Line plots as SVG, written by hand: axes with "nice" ticks, one polyline
//! (with point markers) per series, a legend, and optional vertical marker
//! lines (a failure time, say). Output is a plain string, so the same data
//! gives the same file byte for byte.

use std::fmt::Write;

#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    /// Force the y range to include these (e.g. 0).
    pub y_include: Vec<f64>,
    /// Vertical lines at x with a label.
    pub markers: Vec<(f64, String)>,
    /// Draw point markers (for sweeps; off for dense time series).
    pub dots: bool,
}

const W: f64 = 720.0;
const H: f64 = 420.0;
const L: f64 = 70.0;
const R: f64 = 200.0;
const T: f64 = 40.0;
const B: f64 = 55.0;
const COLORS: [&str; 8] = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

/// Tick positions covering [lo, hi] with a 1-2-5 step.
pub fn ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    let span = (hi - lo).abs().max(1e-12);
    let raw = span / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| span / s <= target as f64).unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() * step;
    let mut out = Vec::new();
    let mut v = first;
    while v <= hi + step * 1e-9 {
        out.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
        v += step;
    }
    out
}

fn fmt_tick(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e9 {
        format!("{}", v as i64)
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

impl Plot {
    pub fn svg(&self) -> String {
        let pts = self.series.iter().flat_map(|s| s.points.iter());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
        for &(x, y) in pts {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        for &(x, _) in &self.markers {
            x0 = x0.min(x);
            x1 = x1.max(x);
        }
        for &y in &self.y_include {
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        if !x0.is_finite() {
            (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
        }
        if x1 <= x0 {
            x1 = x0 + 1.0;
        }
        if y1 <= y0 {
            y1 = y0 + 1.0;
        }
        let xt = ticks(x0, x1, 8);
        let mut yt = ticks(y0, y1, 6);
        // Extend the y axis to a whole tick, so the top is labelled.
        let step_y = if yt.len() > 1 { yt[1] - yt[0] } else { 1.0 };
        if yt.last().is_some_and(|&t| t < y1 - 1e-12) {
            y1 = yt.last().copied().unwrap_or(y1) + step_y;
            yt.push(y1);
        }
        let pw = W - L - R;
        let ph = H - T - B;
        let sx = |x: f64| L + (x - x0) / (x1 - x0) * pw;
        let sy = |y: f64| T + ph - (y - y0) / (y1 - y0) * ph;
        let mut o = String::new();
        let _ = writeln!(
            o,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(o, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
        let _ = writeln!(
            o,
            r#"<text x="{}" y="22" text-anchor="middle" font-size="15">{}</text>"#,
            L + pw / 2.0,
            esc(&self.title)
        );
        for &t in &yt {
            let y = sy(t);
            let _ = writeln!(o, r##"<line x1="{L}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e5e5e5"/>"##, L + pw);
            let _ = writeln!(o, r#"<text x="{}" y="{:.1}" text-anchor="end">{}</text>"#, L - 6.0, y + 4.0, fmt_tick(t));
        }
        for &t in &xt {
            let x = sx(t);
            let _ = writeln!(
                o,
                r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#333"/>"##,
                T + ph,
                T + ph + 5.0
            );
            let _ =
                writeln!(o, r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#, T + ph + 18.0, fmt_tick(t));
        }
        let _ = writeln!(o, r##"<path d="M{L},{T} V{:.1} H{:.1}" fill="none" stroke="#333"/>"##, T + ph, L + pw);
        let _ = writeln!(
            o,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            L + pw / 2.0,
            H - 12.0,
            esc(&self.x_label)
        );
        let _ = writeln!(
            o,
            r#"<text x="16" y="{:.1}" text-anchor="middle" transform="rotate(-90 16 {:.1})">{}</text>"#,
            T + ph / 2.0,
            T + ph / 2.0,
            esc(&self.y_label)
        );
        for (x, label) in &self.markers {
            let x = sx(*x);
            let _ = writeln!(
                o,
                r##"<line x1="{x:.1}" y1="{T}" x2="{x:.1}" y2="{:.1}" stroke="#888" stroke-dasharray="4 3"/>"##,
                T + ph
            );
            let _ = writeln!(o, r##"<text x="{:.1}" y="{:.1}" fill="#555">{}</text>"##, x + 4.0, T + 12.0, esc(label));
        }
        for (i, s) in self.series.iter().enumerate() {
            let c = COLORS[i % COLORS.len()];
            let mut d = String::new();
            for (j, &(x, y)) in s.points.iter().enumerate() {
                let _ = write!(d, "{}{:.1},{:.1} ", if j == 0 { "M" } else { "L" }, sx(x), sy(y));
            }
            let _ = writeln!(o, r#"<path d="{}" fill="none" stroke="{c}" stroke-width="2"/>"#, d.trim_end());
            if self.dots {
                for &(x, y) in &s.points {
                    let _ = writeln!(o, r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"/>"#, sx(x), sy(y));
                }
            }
            let ly = T + 10.0 + i as f64 * 20.0;
            let lx = L + pw + 15.0;
            let _ = writeln!(
                o,
                r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{c}" stroke-width="2"/>"#,
                lx + 22.0
            );
            let _ = writeln!(o, r#"<text x="{}" y="{}">{}</text>"#, lx + 28.0, ly + 4.0, esc(&s.label));
        }
        o.push_str("</svg>\n");
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_ticks() {
        assert_eq!(ticks(0.0, 10.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(ticks(0.0, 1.0, 4), vec![0.0, 0.5, 1.0]);
    }

    #[test]
    fn svg_has_axes_series_and_legend() {
        let p = Plot {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![Series { label: "a<b".into(), points: vec![(0.0, 1.0), (1.0, 2.0)] }],
            dots: true,
            ..Plot::default()
        };
        let s = p.svg();
        assert!(s.starts_with("<svg") && s.ends_with("</svg>\n"));
        assert!(s.contains("a&lt;b") && s.contains("<circle"));
    }
}
