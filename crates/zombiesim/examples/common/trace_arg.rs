//! The examples' trace argument, `trace:FORMAT:REMAP:PATH`.
use zombiesim::trace::{ReadOptions, TraceFormat};
use zombiesim::workload::TraceSpec;

/// The trace `arg` names (the whole trace, default read options), or `None` when `arg`
/// does not start with `trace:`.
pub fn trace_spec(arg: &str) -> Option<zombiesim::Result<TraceSpec>> {
    let rest = arg.strip_prefix("trace:")?;
    let mut parts = rest.splitn(3, ':');
    let (Some(format), Some(remap), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
        return Some(Err(zombiesim::Error::workload(
            arg,
            "expected trace:FORMAT:REMAP:PATH",
        )));
    };
    Some((|| {
        Ok(TraceSpec {
            path: path.into(),
            format: format.parse::<TraceFormat>()?,
            options: ReadOptions::default(),
            remap: remap.parse()?,
            limit: None,
        })
    })())
}
