//! `--batch FILE.jsonl`: a plan of runs in, one result line per run out.
//!
//! The schema is versioned ([`SCHEMA_VERSION`]) and documented in the man
//! page ([`SCHEMA_HELP`]) and README; additions keep the version, changes
//! of meaning bump it.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::image::runs::{GlobalValue, OutputMode, RunOutcome, RunSpec, RunStatus, StdinSource};
use crate::image::Image;

/// Version of the run-line and result-line schema.
pub const SCHEMA_VERSION: u32 = 1;

/// The schema, as the man page and `--help` show it.
pub const SCHEMA_HELP: &str = "\
BATCH SCHEMA (version 1):
    --batch FILE reads one JSON object per line (blank lines are skipped):
      {\"schema\":1, \"id\":\"m17\", \"args\":[\"--fast\"], \"env\":{\"K\":\"v\"},
       \"clear_env\":false, \"stdin\":\"text\", \"set\":{\"mutant_id\":17, \"mode\":\"fast\"},
       \"timeout_ms\":500, \"max_output\":65536}
    Every field is optional; unknown fields are an error for that line.
      schema      1 if given
      id          string or number, echoed in the result (default: the line number)
      args        argv[1..] (default: the ARGS after --)
      argv0       argv[0] (default: --argv0, else the first input's path)
      env         variables added to jitrun's environment (clear_env: start empty)
      stdin       the run's standard input, UTF-8 text (default: empty)
      set         globals written before constructors run: an integer is
                  written in the symbol's size (1, 2, 4 or 8 bytes), a string
                  as its bytes (no NUL added); --set values apply first
      timeout_ms  wall-clock limit (default: --timeout, else none)
      max_output  bytes kept of each of stdout and stderr (default: --max-output)
    Each run writes one line to stdout when it finishes, in finishing order,
    complete and flushed:
      {\"schema\":1, \"id\":\"m17\", \"status\":\"exited\", \"exit_code\":0, \"signal\":null,
       \"stdout\":\"...\", \"stderr\":\"\", \"stdout_truncated\":false,
       \"stderr_truncated\":false, \"duration_ms\":1.234, \"error\":null}
      status      exited | signaled | timeout | error
      exit_code   set when exited;  signal: set when signaled (e.g. 11 SIGSEGV)
      stdout/err  captured text (invalid UTF-8 replaced by U+FFFD), at most
                  max_output bytes; *_truncated is true when the cap was hit
      error       why the run could not start (bad line, unknown symbol...)
    jitrun exits 0 once every run is reported, whatever the runs did.";

/// One line of the plan.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct PlanLine {
    schema: Option<u32>,
    id: Option<Value>,
    args: Option<Vec<String>>,
    argv0: Option<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    clear_env: bool,
    #[serde(default)]
    stdin: String,
    #[serde(default)]
    set: BTreeMap<String, PlanValue>,
    timeout_ms: Option<u64>,
    max_output: Option<usize>,
}

#[derive(Deserialize, Debug)]
#[serde(untagged)]
enum PlanValue {
    Int(i64),
    Text(String),
}

/// One line of the results.
#[derive(Serialize, Debug)]
struct ResultLine<'a> {
    schema: u32,
    id: &'a Value,
    status: &'static str,
    exit_code: Option<i32>,
    signal: Option<i32>,
    stdout: String,
    stderr: String,
    stdout_truncated: bool,
    stderr_truncated: bool,
    duration_ms: f64,
    error: Option<&'a str>,
}

/// What every run of the batch shares, from the command line.
#[derive(Clone, Debug)]
pub struct BatchDefaults {
    pub entry: String,
    pub argv0: std::ffi::OsString,
    pub args: Vec<std::ffi::OsString>,
    pub set: Vec<(String, GlobalValue)>,
    pub timeout: Option<Duration>,
    pub output_limit: usize,
}

/// How a batch went, for the caller's exit status and summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchSummary {
    pub runs: usize,
    /// Runs that did not exit with status 0.
    pub failures: usize,
}

fn parse_line(text: &str, line_number: usize, defaults: &BatchDefaults) -> (Value, Result<RunSpec>) {
    let fallback_id = Value::from(line_number);
    let line: PlanLine = match serde_json::from_str(text) {
        Ok(line) => line,
        Err(e) => {
            // Keep the line's id when it is there, for the error line.
            let id = serde_json::from_str::<Value>(text).ok().and_then(|v| v.get("id").cloned());
            let id = id.unwrap_or(fallback_id);
            return (id, Err(anyhow::anyhow!("line {}: {}", line_number, e)));
        }
    };
    let id = line.id.clone().unwrap_or(fallback_id);
    if let Some(schema) = line.schema.filter(|&s| s != SCHEMA_VERSION) {
        return (
            id,
            Err(anyhow::anyhow!("line {}: schema {} is not supported (only {})", line_number, schema, SCHEMA_VERSION)),
        );
    }
    let mut set = defaults.set.clone();
    set.extend(line.set.into_iter().map(|(name, value)| {
        let value = match value {
            PlanValue::Int(i) => GlobalValue::Int(i),
            PlanValue::Text(s) => GlobalValue::Bytes(s.into_bytes()),
        };
        (name, value)
    }));
    let spec = RunSpec {
        entry: defaults.entry.clone(),
        argv0: line.argv0.map_or_else(|| defaults.argv0.clone(), Into::into),
        args: line.args.map_or_else(|| defaults.args.clone(), |args| args.into_iter().map(Into::into).collect()),
        env: line.env.into_iter().collect(),
        clear_env: line.clear_env,
        stdin: StdinSource::Bytes(line.stdin.into_bytes()),
        set,
        timeout: line.timeout_ms.map(Duration::from_millis).or(defaults.timeout),
        output: OutputMode::Capture { limit: line.max_output.unwrap_or(defaults.output_limit) },
    };
    (id, Ok(spec))
}

fn write_result(out: &mut dyn Write, id: &Value, outcome: &RunOutcome) -> Result<()> {
    let (status, error) = match &outcome.status {
        RunStatus::Exited(_) => ("exited", None),
        RunStatus::Signaled(_) => ("signaled", None),
        RunStatus::Timeout => ("timeout", None),
        RunStatus::Error(message) => ("error", Some(message.as_str())),
    };
    let line = ResultLine {
        schema: SCHEMA_VERSION,
        id,
        status,
        exit_code: outcome.exit_code(),
        signal: outcome.signal(),
        stdout: String::from_utf8_lossy(&outcome.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&outcome.stderr).into_owned(),
        stdout_truncated: outcome.stdout_truncated,
        stderr_truncated: outcome.stderr_truncated,
        duration_ms: (outcome.duration.as_secs_f64() * 1e6).round() / 1e3,
        error,
    };
    let mut text = serde_json::to_string(&line).context("cannot encode a result line")?;
    text.push('\n');
    // One write per line, then flush: a killed jitrun loses at most the
    // runs in flight, never half a line.
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).context("cannot write a result line")
}

/// Runs every line of `plan` isolated, `jobs` at a time, and writes one
/// result line per run to `out` as runs finish. With `progress`, a status
/// line on stderr is redrawn after each run.
pub fn run_plan(
    image: &Image,
    plan: &str,
    defaults: &BatchDefaults,
    jobs: usize,
    progress: bool,
    out: &mut dyn Write,
) -> Result<BatchSummary> {
    let mut ids = Vec::new();
    let mut specs = Vec::new();
    let mut summary = BatchSummary::default();
    let started = Instant::now();
    let lines: Vec<(usize, &str)> =
        plan.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty()).collect();
    let total = lines.len();
    let mut report = |summary: &mut BatchSummary, id: &Value, outcome: &RunOutcome| -> Result<()> {
        summary.runs += 1;
        summary.failures += usize::from(!outcome.succeeded());
        write_result(out, id, outcome)?;
        if progress {
            let rate = summary.runs as f64 / started.elapsed().as_secs_f64().max(1e-9);
            eprint!("\r\x1b[Kjitrun: {}/{} runs, {} failed, {:.0} runs/s", summary.runs, total, summary.failures, rate);
        }
        Ok(())
    };
    for (line_number, text) in lines {
        let (id, spec) = parse_line(text, line_number, defaults);
        match spec {
            Ok(spec) => {
                ids.push(id);
                specs.push(spec);
            }
            Err(e) => {
                let outcome = RunOutcome {
                    status: RunStatus::Error(format!("{:#}", e)),
                    stdout: Vec::new(),
                    stderr: Vec::new(),
                    stdout_truncated: false,
                    stderr_truncated: false,
                    duration: Duration::ZERO,
                };
                report(&mut summary, &id, &outcome)?;
            }
        }
    }
    let mut write_error = None;
    image.run_batch(specs, jobs, |index, outcome| {
        if write_error.is_none() {
            write_error = report(&mut summary, &ids[index], &outcome).err();
        }
    })?;
    if progress {
        eprintln!();
    }
    if let Some(e) = write_error {
        return Err(e);
    }
    if summary.runs != total {
        bail!("internal: {} of {} runs reported", summary.runs, total);
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> BatchDefaults {
        BatchDefaults {
            entry: "main".into(),
            argv0: "prog".into(),
            args: vec!["default".into()],
            set: vec![("base".into(), GlobalValue::Int(1))],
            timeout: Some(Duration::from_secs(3)),
            output_limit: 100,
        }
    }

    #[test]
    fn a_full_line_becomes_a_spec() {
        let text = r#"{"schema":1,"id":"m17","argv0":"./unzstd","args":["--fast"],"env":{"K":"v"},"stdin":"in","set":{"mutant_id":17,"mode":"fast"},"timeout_ms":500,"max_output":10}"#;
        let (id, spec) = parse_line(text, 4, &defaults());
        let spec = spec.unwrap();
        assert_eq!(id, Value::from("m17"));
        assert_eq!(spec.argv0, "./unzstd");
        assert_eq!(spec.args, vec!["--fast"]);
        assert_eq!(spec.env, vec![("K".to_string(), "v".to_string())]);
        assert_eq!(spec.stdin, StdinSource::Bytes(b"in".to_vec()));
        assert_eq!(
            spec.set,
            vec![
                ("base".to_string(), GlobalValue::Int(1)),
                ("mode".to_string(), GlobalValue::Bytes(b"fast".to_vec())),
                ("mutant_id".to_string(), GlobalValue::Int(17)),
            ]
        );
        assert_eq!(spec.timeout, Some(Duration::from_millis(500)));
        assert_eq!(spec.output, OutputMode::Capture { limit: 10 });
    }

    #[test]
    fn an_empty_line_takes_the_defaults() {
        let (id, spec) = parse_line("{}", 7, &defaults());
        let spec = spec.unwrap();
        assert_eq!(id, Value::from(7));
        assert_eq!(spec.argv0, "prog");
        assert_eq!(spec.args, vec!["default"]);
        assert_eq!(spec.timeout, Some(Duration::from_secs(3)));
        assert_eq!(spec.output, OutputMode::Capture { limit: 100 });
        assert_eq!(spec.stdin, StdinSource::Bytes(Vec::new()));
    }

    #[test]
    fn bad_lines_are_errors_that_keep_their_id() {
        let (id, spec) = parse_line(r#"{"id":"x","argz":[]}"#, 2, &defaults());
        assert_eq!(id, Value::from("x"));
        assert!(format!("{:#}", spec.unwrap_err()).contains("argz"));
        let (id, spec) = parse_line("not json", 3, &defaults());
        assert_eq!(id, Value::from(3));
        assert!(spec.is_err());
        let (_, spec) = parse_line(r#"{"schema":2}"#, 1, &defaults());
        assert!(format!("{:#}", spec.unwrap_err()).contains("schema 2"));
    }

    #[test]
    fn result_lines_follow_the_schema() {
        let outcome = RunOutcome {
            status: RunStatus::Signaled(11),
            stdout: b"a\xff".to_vec(),
            stderr: Vec::new(),
            stdout_truncated: true,
            stderr_truncated: false,
            duration: Duration::from_micros(1500),
        };
        let mut out = Vec::new();
        write_result(&mut out, &Value::from("m1"), &outcome).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.ends_with('\n') && text.matches('\n').count() == 1);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["schema"], 1);
        assert_eq!(v["id"], "m1");
        assert_eq!(v["status"], "signaled");
        assert_eq!(v["signal"], 11);
        assert_eq!(v["exit_code"], Value::Null);
        assert_eq!(v["stdout"], "a\u{fffd}");
        assert_eq!(v["stdout_truncated"], true);
        assert_eq!(v["duration_ms"], 1.5);
        assert_eq!(v["error"], Value::Null);
    }
}
