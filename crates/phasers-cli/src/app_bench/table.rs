//! The tables `phasers app` prints: one per application and size, and one for the
//! interpreter's NOP program.

use phasers_cli::harness::table::{
    aligned, note_cell, ratio, resolved_label, threads_cell, time, Last,
};

use phasers_cli::harness::footnotes::wrap;

use super::results::{AppRun, NopRow, RowId};

/// `rows` under the `|`-separated `columns`: each line the row's threads (`8*` when they
/// outnumber the cores), its kind (`auto → mcs-tree`), its values, and its error if any.
fn table<'a, R: 'a>(
    columns: &str,
    rows: impl IntoIterator<Item = &'a R>,
    line: impl Fn(&R) -> (&RowId, Vec<String>, &Option<String>),
) -> String {
    let header = format!("threads|sync|{columns}|");
    let lines = rows.into_iter().map(|row| {
        let (id, values, error) = line(row);
        let threads = threads_cell(id.threads, id.oversubscribed);
        let sync = resolved_label(&id.sync, id.resolved.as_deref());
        [
            vec![threads, sync],
            values,
            vec![note_cell(error.as_deref(), &[])],
        ]
        .concat()
    });
    let header = header.split('|').map(String::from).collect();
    aligned(&[vec![header], lines.collect()].concat(), Last::Free)
}

fn or_dash<T>(value: Option<T>, show: impl FnOnce(T) -> String) -> String {
    value.map_or_else(|| "-".into(), show)
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
    let speedup = |speedup: Option<f64>| or_dash(speedup, |speedup| format!("{speedup:.2}"));
    let table = table("min|median|×seq|×1 thread|barriers", &run.rows, |row| {
        let values = vec![
            or_dash(row.summary, |summary| time(summary.min)),
            or_dash(row.summary, |summary| time(summary.median)),
            speedup(row.speedup_vs_sequential),
            speedup(row.speedup_vs_one_thread),
            or_dash(row.barriers, |barriers| barriers.to_string()),
        ];
        (&row.id, values, &row.error)
    });
    let title = format!("{} {} ({}); sequential:", run.app, run.size, run.problem);
    let mut out = format!("{}{table}", wrap(&format!("{title} "), &sequential));
    for ratios in &run.ratios {
        let threads = ratios.threads;
        if (run.rows.iter()).any(|row| row.id.threads == threads && row.id.sync == "auto") {
            out.push_str(&format!(
                "  {threads} threads: auto / best standard ({}) = {}, auto / std::sync::Barrier \
                 = {}\n",
                ratios.best_baseline.as_deref().unwrap_or("none measured"),
                ratio(ratios.auto_over_best_baseline, Some(1.0)),
                ratio(ratios.auto_over_std, Some(1.0)),
            ));
        }
    }
    out
}

/// The NOP table.
pub fn nop_table(rows: &[NopRow]) -> String {
    let columns = "ns/NOP min|ns/NOP median|cycles/NOP median|barriers/NOP";
    let table = table(columns, rows, |row| {
        let values = vec![
            or_dash(row.ns_per_nop, |summary| format!("{:.1}", summary.min)),
            or_dash(row.ns_per_nop, |summary| format!("{:.1}", summary.median)),
            or_dash(row.cycles_per_nop, |summary| {
                format!("{:.0}", summary.median)
            }),
            or_dash(row.barriers_per_nop, |barriers| format!("{barriers:.2}")),
        ];
        (&row.id, values, &row.error)
    });
    let title = format!(
        "interp NOP program: {} NOPs, each a decode by rank 0 and two barriers (ideal: every \
         thread decodes, no barriers); cycles are x86_64 TSC ticks",
        rows.first().map_or(0, |row| row.nops),
    );
    format!(
        "{}{table}  * threads outnumber the available cores\n",
        wrap("", &title)
    )
}
