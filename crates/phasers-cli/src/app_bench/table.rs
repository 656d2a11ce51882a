//! The tables `phasers app` prints: one per application and size, and one for the
//! interpreter's NOP program.

use crate::report::{aligned, ratio, time, Last};

use super::results::{AppRow, AppRun, NopRow};

/// A row's kind, with what `auto` resolved to.
fn label(sync: &str, resolved: Option<&str>) -> String {
    match resolved {
        Some(resolved) if resolved != sync => format!("{sync} → {resolved}"),
        _ => sync.to_owned(),
    }
}

fn error_note(error: Option<&str>) -> String {
    error.map_or_else(String::new, |error| format!("ERROR: {error}"))
}

fn row_cells(row: &AppRow) -> Vec<String> {
    let summary = row.summary;
    vec![
        format!(
            "{}{}",
            row.id.threads,
            if row.id.oversubscribed { "*" } else { "" }
        ),
        label(&row.id.sync, row.id.resolved.as_deref()),
        summary.map_or_else(|| "-".into(), |summary| time(summary.min)),
        summary.map_or_else(|| "-".into(), |summary| time(summary.median)),
        row.speedup_vs_sequential
            .map_or_else(|| "-".into(), |speedup| format!("{speedup:.2}")),
        row.speedup_vs_one_thread
            .map_or_else(|| "-".into(), |speedup| format!("{speedup:.2}")),
        row.barriers
            .map_or_else(|| "-".into(), |barriers| barriers.to_string()),
        error_note(row.error.as_deref()),
    ]
}

/// The table of one application and size, with its ratio lines.
pub fn app_table(run: &AppRun) -> String {
    let sequential = match (&run.sequential, &run.sequential_error) {
        (_, Some(error)) => format!("ERROR: {error}"),
        (Some(summary), None) => {
            format!("min {}, median {}", time(summary.min), time(summary.median))
        }
        (None, None) => "-".to_owned(),
    };
    let mut out = format!(
        "{} {} ({}); sequential: {sequential}\n",
        run.app, run.size, run.problem
    );
    let mut cells = vec![[
        "threads",
        "sync",
        "min",
        "median",
        "×seq",
        "×1 thread",
        "barriers",
        "",
    ]
    .map(String::from)
    .to_vec()];
    cells.extend(run.rows.iter().map(row_cells));
    out.push_str(&aligned(&cells, Last::Free));
    for ratios in &run.ratios {
        let auto = run
            .rows
            .iter()
            .find(|row| row.id.threads == ratios.threads && row.id.sync == "auto");
        if auto.is_none() {
            continue;
        }
        out.push_str(&format!(
            "  {} threads: auto / best standard ({}) = {}, auto / std::sync::Barrier = {}\n",
            ratios.threads,
            ratios.best_baseline.as_deref().unwrap_or("none measured"),
            ratio(ratios.auto_over_best_baseline, Some(1.0)),
            ratio(ratios.auto_over_std, Some(1.0)),
        ));
    }
    out
}

/// The NOP table.
pub fn nop_table(rows: &[NopRow]) -> String {
    let nops = rows.first().map_or(0, |row| row.nops);
    let mut out = format!(
        "interp NOP program: {nops} NOPs, each a decode by rank 0 and two barriers (ideal: \
         every thread decodes, no barriers); cycles are x86_64 TSC ticks\n"
    );
    let mut cells = vec![[
        "threads",
        "sync",
        "ns/NOP min",
        "ns/NOP median",
        "cycles/NOP median",
        "barriers/NOP",
        "",
    ]
    .map(String::from)
    .to_vec()];
    for row in rows {
        cells.push(vec![
            format!(
                "{}{}",
                row.id.threads,
                if row.id.oversubscribed { "*" } else { "" }
            ),
            label(&row.id.sync, row.id.resolved.as_deref()),
            row.ns_per_nop
                .map_or_else(|| "-".into(), |summary| format!("{:.1}", summary.min)),
            row.ns_per_nop
                .map_or_else(|| "-".into(), |summary| format!("{:.1}", summary.median)),
            row.cycles_per_nop
                .map_or_else(|| "-".into(), |summary| format!("{:.0}", summary.median)),
            row.barriers_per_nop
                .map_or_else(|| "-".into(), |barriers| format!("{barriers:.2}")),
            error_note(row.error.as_deref()),
        ]);
    }
    out.push_str(&aligned(&cells, Last::Free));
    out.push_str("  * threads outnumber the available cores\n");
    out
}
