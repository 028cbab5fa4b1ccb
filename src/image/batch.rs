//! `--batch FILE.jsonl`: a plan of runs in, one result line per run out.
//!
//! The schema is versioned ([`SCHEMA_VERSION`]) and documented in the man
//! page ([`SCHEMA_HELP`]) and README; additions keep the version, changes
//! of meaning bump it.
//!
//! A plan streams: it is read twice, line by line (once to check its ids,
//! once to run it), and a run is parsed only when a job is free for it, so
//! memory stays flat however long the plan is. `--shard K/N` runs the
//! lines whose number is K modulo N; `--resume FILE` skips the ids that
//! FILE already has a result for.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::image::limits::{parse_size, RunLimits};
use crate::image::runs::{GlobalValue, OutputMode, RunOutcome, RunSpec, RunStatus, StdinSource};
use crate::image::sandbox::SandboxSpec;
use crate::image::Image;

/// Version of the result-line schema. 2: the `limit` status and the
/// `limit` and `resources` fields (a run the kernel killed for a limit was
/// `signaled` in version 1). Plan lines of version 1 and 2 are read alike.
pub const SCHEMA_VERSION: u32 = 2;

/// The schema, as the man page and `--help` show it.
pub const SCHEMA_HELP: &str = "\
BATCH SCHEMA (version 2):
    --batch FILE reads one JSON object per line (blank lines are skipped):
      {\"schema\":2, \"id\":\"m17\", \"args\":[\"--fast\"], \"env\":{\"K\":\"v\"},
       \"clear_env\":false, \"stdin\":\"text\", \"set\":{\"mutant_id\":17, \"mode\":\"fast\"},
       \"timeout_ms\":500, \"max_output\":65536,
       \"limits\":{\"memory\":\"512M\", \"cpu_time_ms\":5000, \"processes\":64,
                 \"file_size\":\"10M\", \"open_files\":256, \"core_dumps\":false}}
    Every field is optional; unknown fields are an error for that line.
      schema      1 or 2 if given
      id          string or number, echoed in the result (default: the line number);
                  required with --shard and --resume; ids must be unique
      args        argv[1..] (default: the ARGS after --)
      argv0       argv[0] (default: --argv0, else the first input's path)
      env         variables added to jitrun's environment (clear_env: start empty)
      stdin       the run's standard input, UTF-8 text (default: empty)
      set         globals written before constructors run: an integer is
                  written in the symbol's size (1, 2, 4 or 8 bytes), a string
                  as its bytes (no NUL added); --set values apply first
      timeout_ms  wall-clock limit (default: --timeout, else none)
      max_output  bytes kept of each of stdout and stderr (default: --max-output)
      limits      per-run limits over the command line's (see LIMITS); sizes
                  are bytes or strings with K, M, G
    Each run writes one line to stdout when it finishes, in finishing order,
    complete and flushed with one write:
      {\"schema\":2, \"id\":\"m17\", \"status\":\"exited\", \"exit_code\":0, \"signal\":null,
       \"limit\":null, \"stdout\":\"...\", \"stderr\":\"\", \"stdout_truncated\":false,
       \"stderr_truncated\":false, \"duration_ms\":1.234,
       \"resources\":{\"user_ms\":0.8, \"system_ms\":0.3, \"max_rss_kib\":3100,
         \"minor_faults\":120, \"major_faults\":0, \"voluntary_switches\":2,
         \"involuntary_switches\":0, \"peak_memory_kib\":null, \"wall_ms\":1.234},
       \"error\":null}
      status      exited | signaled | timeout | limit | error
      exit_code   set when exited;  signal: set when signaled (e.g. 11 SIGSEGV)
      limit       set when status is limit: memory | processes | cpu_time | file_size
      stdout/err  captured text (invalid UTF-8 replaced by U+FFFD), at most
                  max_output bytes; *_truncated is true when the cap was hit
      resources   what the run cost (null when it never ran): CPU times, peak RSS,
                  page faults and context switches of its first process and the
                  children it waited for (wait4), the peak of its memory cgroup
                  (all its processes; null without --max-memory), wall time
      error       why the run could not start (bad line, unknown symbol...)
    --shard K/N runs only the lines whose line number L has (L-1) mod N = K-1, so N
    jobs with K = 1..N run every line once. --resume FILE skips the ids that FILE
    has a result line for (every status is final) and runs the rest; append the
    output to FILE. `jitrun --merge-results FILES...` merges results files.
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
    #[serde(default)]
    limits: PlanLimits,
}

#[derive(Deserialize, Debug)]
#[serde(untagged)]
enum PlanValue {
    Int(i64),
    Text(String),
}

/// A plan line's `limits`.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct PlanLimits {
    memory: Option<PlanSize>,
    cpu_time_ms: Option<u64>,
    processes: Option<u64>,
    file_size: Option<PlanSize>,
    open_files: Option<u64>,
    core_dumps: Option<bool>,
}

/// A size: bytes, or a string such as "512M".
#[derive(Deserialize, Debug)]
#[serde(untagged)]
enum PlanSize {
    Bytes(u64),
    Text(String),
}

impl PlanSize {
    fn bytes(&self, field: &str) -> Result<u64> {
        match self {
            PlanSize::Bytes(n) => Ok(*n),
            PlanSize::Text(text) => parse_size(text).map_err(|e| anyhow!("limits.{}: {}", field, e)),
        }
    }
}

impl PlanLimits {
    fn to_limits(&self) -> Result<RunLimits> {
        Ok(RunLimits {
            memory: self.memory.as_ref().map(|m| m.bytes("memory")).transpose()?,
            cpu_time: self.cpu_time_ms.map(Duration::from_millis),
            processes: self.processes,
            file_size: self.file_size.as_ref().map(|m| m.bytes("file_size")).transpose()?,
            open_files: self.open_files,
            core_dumps: self.core_dumps.unwrap_or(false),
        })
    }
}

/// One line of the results.
#[derive(Serialize, Debug)]
struct ResultLine<'a> {
    schema: u32,
    id: &'a Value,
    status: &'static str,
    exit_code: Option<i32>,
    signal: Option<i32>,
    limit: Option<&'static str>,
    stdout: String,
    stderr: String,
    stdout_truncated: bool,
    stderr_truncated: bool,
    duration_ms: f64,
    resources: Option<Value>,
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
    pub limits: RunLimits,
    pub sandbox: Option<SandboxSpec>,
}

/// `--shard K/N`: the K-th (from 1) of N slices of a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// Parses `K/N` with 1 <= K <= N.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let (k, n) = text.split_once('/').ok_or_else(|| format!("`{}`: expected K/N, e.g. 3/8", text))?;
        let (index, count) = match (k.trim().parse::<u64>(), n.trim().parse::<u64>()) {
            (Ok(k), Ok(n)) => (k, n),
            _ => return Err(format!("`{}`: expected K/N with whole numbers, e.g. 3/8", text)),
        };
        if count == 0 || index == 0 || index > count {
            return Err(format!("`{}`: K must be between 1 and N", text));
        }
        Ok(Shard { index, count })
    }

    /// Whether line `line_number` (from 1) belongs to this shard: lines
    /// are dealt round-robin, so that costly neighbours spread over shards.
    pub fn has_line(&self, line_number: usize) -> bool {
        (line_number as u64 - 1) % self.count == self.index - 1
    }
}

/// How to run a plan.
#[derive(Clone, Debug, Default)]
pub struct BatchOptions {
    pub jobs: usize,
    /// Redraw a status line on stderr after each run.
    pub progress: bool,
    pub shard: Option<Shard>,
    /// A results file whose ids are done.
    pub resume: Option<PathBuf>,
    /// The results go to the `resume` file itself (stdout appends to it):
    /// an incomplete last line, which only a kill in the middle of a write
    /// leaves, may then be cut off before the runs append theirs.
    pub resume_is_output: bool,
}

/// How a batch went, for the caller's exit status and summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchSummary {
    pub runs: usize,
    /// Runs that did not exit with status 0.
    pub failures: usize,
    /// Lines of the shard skipped because the resumed file had them.
    pub skipped: usize,
}

/// The id of a line that is not valid JSON (or not an object), when it has one.
fn loose_id(text: &str) -> Option<Value> {
    serde_json::from_str::<Value>(text).ok().and_then(|v| v.get("id").cloned())
}

/// An id as a key: its JSON text, so that "7" and 7 differ.
fn id_key(id: &Value) -> String {
    id.to_string()
}

fn parse_line(text: &str, line_number: usize, defaults: &BatchDefaults) -> (Value, Result<RunSpec>) {
    let fallback_id = Value::from(line_number);
    let line: PlanLine = match serde_json::from_str(text) {
        Ok(line) => line,
        Err(e) => {
            // Keep the line's id when it is there, for the error line.
            let id = loose_id(text).unwrap_or(fallback_id);
            return (id, Err(anyhow!("line {}: {}", line_number, e)));
        }
    };
    let id = line.id.clone().unwrap_or(fallback_id);
    if let Some(schema) = line.schema.filter(|&s| s != 1 && s != SCHEMA_VERSION) {
        return (
            id,
            Err(anyhow!("line {}: schema {} is not supported (only 1 and {})", line_number, schema, SCHEMA_VERSION)),
        );
    }
    let limits = match line.limits.to_limits() {
        Ok(limits) => limits.or(&defaults.limits),
        Err(e) => return (id, Err(e.context(format!("line {}", line_number)))),
    };
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
        limits,
        sandbox: defaults.sandbox.clone(),
    };
    (id, Ok(spec))
}

/// The status word of a result line.
fn status_name(status: &RunStatus) -> &'static str {
    match status {
        RunStatus::Exited(_) => "exited",
        RunStatus::Signaled(_) => "signaled",
        RunStatus::Timeout => "timeout",
        RunStatus::Limit(_) => "limit",
        RunStatus::Error(_) => "error",
    }
}

/// Statuses a result line can have; a line with any of them is final.
const FINAL_STATUSES: [&str; 5] = ["exited", "signaled", "timeout", "limit", "error"];

fn write_result(out: &mut dyn Write, id: &Value, outcome: &RunOutcome) -> Result<()> {
    let error = match &outcome.status {
        RunStatus::Error(message) => Some(message.as_str()),
        _ => None,
    };
    let line = ResultLine {
        schema: SCHEMA_VERSION,
        id,
        status: status_name(&outcome.status),
        exit_code: outcome.exit_code(),
        signal: outcome.signal(),
        limit: outcome.limit().map(|kind| kind.name()),
        stdout: String::from_utf8_lossy(&outcome.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&outcome.stderr).into_owned(),
        stdout_truncated: outcome.stdout_truncated,
        stderr_truncated: outcome.stderr_truncated,
        duration_ms: (outcome.duration.as_secs_f64() * 1e6).round() / 1e3,
        resources: outcome.resources.as_ref().map(|r| r.to_json(outcome.duration)),
        error,
    };
    let mut text = serde_json::to_string(&line).context("cannot encode a result line")?;
    text.push('\n');
    // One write per line, then flush: a killed jitrun loses at most the
    // runs in flight, never half a line.
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).context("cannot write a result line")
}

/// A plan's text, read line by line as often as needed: a regular file is
/// opened again for each pass; anything else (a pipe) is read once into
/// memory, which then does not stay flat.
enum PlanSource {
    File(PathBuf),
    Bytes(Vec<u8>),
}

impl PlanSource {
    fn open(path: &Path) -> Result<PlanSource> {
        let meta =
            std::fs::metadata(path).with_context(|| format!("{}: cannot read the batch plan", path.display()))?;
        if meta.is_file() {
            return Ok(PlanSource::File(path.to_path_buf()));
        }
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|mut f| f.read_to_end(&mut bytes))
            .with_context(|| format!("{}: cannot read the batch plan", path.display()))?;
        Ok(PlanSource::Bytes(bytes))
    }

    /// The lines with their numbers (from 1), trimmed; blank lines included.
    fn lines(&self, path: &Path) -> Result<impl Iterator<Item = Result<(usize, String)>> + '_> {
        let reader: Box<dyn BufRead> = match self {
            PlanSource::File(file) => Box::new(BufReader::with_capacity(
                1 << 16,
                std::fs::File::open(file).with_context(|| format!("{}: cannot read the batch plan", file.display()))?,
            )),
            PlanSource::Bytes(bytes) => Box::new(&bytes[..]),
        };
        let path = path.to_path_buf();
        Ok(reader.lines().enumerate().map(move |(i, line)| {
            let line = line.with_context(|| format!("{}:{}: cannot read the batch plan", path.display(), i + 1))?;
            Ok((i + 1, line.trim().to_string()))
        }))
    }
}

/// Lists problems as "A, B, C and 7 more".
fn some_of(items: &[String]) -> String {
    const SHOWN: usize = 10;
    let mut text = items.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    if items.len() > SHOWN {
        text.push_str(&format!(" and {} more", items.len() - SHOWN));
    }
    text
}

/// Checks a plan's ids before anything runs: unique, and present on every
/// line when `require_ids`. Returns how many lines `shard` selects.
fn check_plan_ids(source: &PlanSource, path: &Path, require_ids: bool, shard: Option<Shard>) -> Result<usize> {
    let mut first_line: HashMap<String, usize> = HashMap::new();
    let mut duplicates = Vec::new();
    let mut missing = Vec::new();
    let mut selected = 0;
    for line in source.lines(path)? {
        let (number, text) = line?;
        if text.is_empty() {
            continue;
        }
        if shard.is_none_or(|s| s.has_line(number)) {
            selected += 1;
        }
        let id = match loose_id(&text) {
            Some(id) => id,
            None if require_ids => {
                missing.push(number.to_string());
                continue;
            }
            None => Value::from(number),
        };
        match first_line.entry(id_key(&id)) {
            std::collections::hash_map::Entry::Occupied(first) => {
                duplicates.push(format!("{} on lines {} and {}", id, first.get(), number))
            }
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(number);
            }
        }
    }
    if !duplicates.is_empty() {
        bail!("{}: duplicate ids: {}", path.display(), some_of(&duplicates));
    }
    if !missing.is_empty() {
        bail!(
            "{}: lines without an \"id\" (--shard and --resume need one on every line to tell runs apart): line {}",
            path.display(),
            some_of(&missing)
        );
    }
    Ok(selected)
}

/// One line of a results file, as far as resuming and merging need it.
#[derive(Deserialize)]
struct ResultKey {
    id: Value,
    status: String,
}

/// Reads a results file line by line, calling `each(line_number, key, text)`
/// for every line; a line that is not a complete result is an error
/// naming it (results are written one whole line at a time, so only a
/// hand-edited or foreign file has one).
fn read_results(path: &Path, mut each: impl FnMut(usize, ResultKey, &str) -> Result<()>) -> Result<()> {
    let file = std::fs::File::open(path).with_context(|| format!("{}: cannot read the results", path.display()))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut line = String::new();
    let mut number = 0;
    loop {
        line.clear();
        let n = reader.read_line(&mut line).with_context(|| format!("{}: cannot read the results", path.display()))?;
        if n == 0 {
            return Ok(());
        }
        number += 1;
        if line.trim().is_empty() {
            continue;
        }
        if !line.ends_with('\n') {
            bail!(
                "{}:{}: the last line is incomplete (no newline at its end: a batch killed while writing it); \
                 resume with the output appended to this file (`>> {}`), which removes it, or remove it yourself",
                path.display(),
                number,
                path.display()
            );
        }
        let key: ResultKey = serde_json::from_str(line.trim_end())
            .with_context(|| format!("{}:{}: not a result line", path.display(), number))?;
        each(number, key, line.trim_end())?;
    }
}

/// Cuts an incomplete last line off `path` (a write cut short by SIGKILL:
/// the kernel stops a write to a file between pages when a fatal signal
/// is pending). Returns the bytes removed.
pub fn cut_incomplete_last_line(path: &Path) -> Result<u64> {
    use std::io::{Seek, SeekFrom};
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .with_context(|| format!("{}: cannot open the results", path.display()))?;
    let len = file.metadata().with_context(|| format!("{}: cannot read the results", path.display()))?.len();
    // Read back in blocks until the last newline.
    let mut end = len;
    let mut block = vec![0u8; 1 << 16];
    while end > 0 {
        let start = end.saturating_sub(block.len() as u64);
        let chunk = &mut block[..(end - start) as usize];
        file.seek(SeekFrom::Start(start)).and_then(|_| file.read_exact(chunk)).context("cannot read the results")?;
        if let Some(at) = chunk.iter().rposition(|&b| b == b'\n') {
            end = start + at as u64 + 1;
            break;
        }
        end = start;
    }
    if end < len {
        file.set_len(end).with_context(|| format!("{}: cannot cut its incomplete last line", path.display()))?;
    }
    Ok(len - end)
}

/// The ids a results file has a final result for.
fn finished_ids(path: &Path) -> Result<HashSet<String>> {
    let mut done = HashSet::new();
    read_results(path, |_, key, _| {
        if FINAL_STATUSES.contains(&key.status.as_str()) {
            done.insert(id_key(&key.id));
        }
        Ok(())
    })?;
    Ok(done)
}

/// Runs the lines of `plan` (those of `options.shard`, less those
/// `options.resume` has) isolated, `options.jobs` at a time, and writes
/// one result line per run to `out` as runs finish.
pub fn run_plan(
    image: &Image,
    plan: &Path,
    defaults: &BatchDefaults,
    options: &BatchOptions,
    out: &mut dyn Write,
    mut on_result: impl FnMut(&Value, &RunOutcome),
) -> Result<BatchSummary> {
    let source = PlanSource::open(plan)?;
    let require_ids = options.shard.is_some() || options.resume.is_some();
    let selected = check_plan_ids(&source, plan, require_ids, options.shard)?;
    let done = match &options.resume {
        Some(results) => {
            if options.resume_is_output {
                let cut = cut_incomplete_last_line(results)?;
                if cut > 0 {
                    eprintln!(
                        "jitrun: {}: removed an incomplete last line ({} bytes) that an interrupted batch left",
                        results.display(),
                        cut
                    );
                }
            }
            finished_ids(results)?
        }
        None => HashSet::new(),
    };
    let mut summary = BatchSummary::default();
    let started = Instant::now();
    // Ids of the runs handed out and not yet reported (at most `jobs`, plus
    // lines that failed to parse).
    let in_flight: std::cell::RefCell<HashMap<usize, Value>> = Default::default();
    let mut handed_out = 0usize;
    let mut read_error = None;
    let mut skipped = 0;
    let lines = source.lines(plan)?;
    let specs = lines
        .map_while(|line| match line {
            Ok(line) => Some(line),
            Err(e) => {
                read_error = Some(e);
                None
            }
        })
        .filter(|(number, text)| !text.is_empty() && options.shard.is_none_or(|s| s.has_line(*number)))
        .filter_map(|(number, text)| {
            let (id, spec) = parse_line(&text, number, defaults);
            if done.contains(&id_key(&id)) {
                skipped += 1;
                return None;
            }
            in_flight.borrow_mut().insert(handed_out, id);
            handed_out += 1;
            Some(spec)
        });
    let total = selected;
    let mut write_error = None;
    let mut reported = 0usize;
    image.run_stream(specs, options.jobs, |index, outcome| {
        let id = in_flight.borrow_mut().remove(&index).unwrap_or(Value::Null);
        reported += 1;
        summary.failures += usize::from(!outcome.succeeded());
        if write_error.is_none() {
            write_error = write_result(out, &id, &outcome).err();
        }
        on_result(&id, &outcome);
        if options.progress {
            let rate = reported as f64 / started.elapsed().as_secs_f64().max(1e-9);
            eprint!("\r\x1b[Kjitrun: {}/{} runs, {} failed, {:.0} runs/s", reported, total, summary.failures, rate);
        }
    })?;
    if options.progress {
        eprintln!();
    }
    if let Some(e) = read_error.or(write_error) {
        return Err(e);
    }
    summary.runs = reported;
    summary.skipped = skipped;
    if reported != handed_out {
        bail!("internal: {} of {} runs reported", reported, handed_out);
    }
    Ok(summary)
}

/// How a merge went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MergeSummary {
    pub results: usize,
    /// Lines whose id an earlier line (or file) already had.
    pub duplicates: usize,
    /// Ids of the plan with no result (when a plan was given).
    pub missing: usize,
}

/// `--merge-results`: writes to `out` the first final result of every id
/// found in `files` (in order), each as it was written; with `plan`, fails
/// naming the plan's ids that have no result.
pub fn merge_results(files: &[PathBuf], plan: Option<&Path>, out: &mut dyn Write) -> Result<MergeSummary> {
    let mut seen = HashSet::new();
    let mut summary = MergeSummary::default();
    for file in files {
        read_results(file, |_, key, text| {
            if !FINAL_STATUSES.contains(&key.status.as_str()) {
                return Ok(());
            }
            if !seen.insert(id_key(&key.id)) {
                summary.duplicates += 1;
                return Ok(());
            }
            summary.results += 1;
            let mut line = String::with_capacity(text.len() + 1);
            line.push_str(text);
            line.push('\n');
            out.write_all(line.as_bytes()).context("cannot write the merged results")
        })?;
    }
    out.flush().context("cannot write the merged results")?;
    if let Some(plan) = plan {
        let source = PlanSource::open(plan)?;
        let mut missing = Vec::new();
        for line in source.lines(plan)? {
            let (number, text) = line?;
            if text.is_empty() {
                continue;
            }
            let id = loose_id(&text).unwrap_or_else(|| Value::from(number));
            if !seen.contains(&id_key(&id)) {
                missing.push(format!("{} (line {})", id, number));
            }
        }
        summary.missing = missing.len();
        if !missing.is_empty() {
            bail!("{} ids of {} have no result: {}", missing.len(), plan.display(), some_of(&missing));
        }
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
            limits: RunLimits { processes: Some(8), ..Default::default() },
            sandbox: None,
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
        assert_eq!(spec.limits.processes, Some(8), "from the command line");
        assert_eq!(spec.limits.memory, None);
    }

    #[test]
    fn plan_limits_take_sizes_and_override_the_command_line() {
        let text = r#"{"schema":2,"limits":{"memory":"512M","cpu_time_ms":1500,"processes":64,"file_size":4096,"open_files":32,"core_dumps":true}}"#;
        let spec = parse_line(text, 1, &defaults()).1.unwrap();
        assert_eq!(
            spec.limits,
            RunLimits {
                memory: Some(512 << 20),
                cpu_time: Some(Duration::from_millis(1500)),
                processes: Some(64),
                file_size: Some(4096),
                open_files: Some(32),
                core_dumps: true,
            }
        );
    }

    #[test]
    fn shards_deal_lines_round_robin_and_cover_a_plan_once() {
        assert_eq!(Shard::parse("3/8"), Ok(Shard { index: 3, count: 8 }));
        for bad in ["0/4", "5/4", "1/0", "x/2", "3", "1/-2"] {
            assert!(Shard::parse(bad).is_err(), "{}", bad);
        }
        let shards: Vec<Shard> = (1..=4).map(|k| Shard { index: k, count: 4 }).collect();
        for line in 1..=103 {
            assert_eq!(shards.iter().filter(|s| s.has_line(line)).count(), 1, "line {}", line);
        }
        assert!(shards[0].has_line(1) && shards[0].has_line(5) && shards[3].has_line(4));
    }

    fn temp_file(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("jitrun-batch-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn duplicate_and_missing_ids_are_refused_with_their_lines() {
        let path = temp_file("dup.jsonl", "{\"id\":\"a\"}\n\n{\"id\":\"b\"}\n{\"id\":\"a\"}\n{}\n");
        let source = PlanSource::open(&path).unwrap();
        let message = format!("{:#}", check_plan_ids(&source, &path, false, None).unwrap_err());
        assert!(message.contains(r#""a" on lines 1 and 4"#), "{}", message);
        let path = temp_file("missing.jsonl", "{\"id\":\"a\"}\n{}\nnot json\n{\"id\":7}\n");
        let source = PlanSource::open(&path).unwrap();
        let message = format!("{:#}", check_plan_ids(&source, &path, true, None).unwrap_err());
        assert!(message.contains("line 2, 3"), "{}", message);
        // Without --shard or --resume, line numbers stand in for ids.
        assert_eq!(check_plan_ids(&source, &path, false, None).unwrap(), 4);
        let half = Shard { index: 2, count: 2 };
        let path = temp_file("ok.jsonl", "{\"id\":1}\n{\"id\":2}\n\n{\"id\":4}\n");
        let source = PlanSource::open(&path).unwrap();
        assert_eq!(check_plan_ids(&source, &path, true, Some(half)).unwrap(), 2);
    }

    #[test]
    fn resumed_files_must_hold_whole_result_lines() {
        let good = temp_file("good.jsonl", "{\"id\":\"a\",\"status\":\"exited\"}\n{\"id\":1,\"status\":\"limit\"}\n");
        let done = finished_ids(&good).unwrap();
        assert!(done.contains("\"a\"") && done.contains("1") && done.len() == 2);
        let cut = temp_file("cut.jsonl", "{\"id\":\"a\",\"status\":\"exited\"}\n{\"id\":\"b\",\"sta");
        let message = format!("{:#}", finished_ids(&cut).unwrap_err());
        assert!(message.contains("cut.jsonl:2") && message.contains("incomplete"), "{}", message);
        assert_eq!(cut_incomplete_last_line(&cut).unwrap(), r#"{"id":"b","sta"#.len() as u64);
        assert_eq!(finished_ids(&cut).unwrap().len(), 1);
        assert_eq!(cut_incomplete_last_line(&cut).unwrap(), 0, "whole lines stay");
        let junk = temp_file("junk.jsonl", "{\"id\":\"a\",\"status\":\"exited\"}\nhello\n");
        assert!(format!("{:#}", finished_ids(&junk).unwrap_err()).contains("junk.jsonl:2"));
    }

    #[test]
    fn merging_keeps_each_id_once_and_names_what_is_missing() {
        let a = temp_file("a.jsonl", "{\"id\":\"x\",\"status\":\"exited\"}\n{\"id\":\"y\",\"status\":\"timeout\"}\n");
        let b = temp_file("b.jsonl", "{\"id\":\"y\",\"status\":\"exited\"}\n{\"id\":\"z\",\"status\":\"limit\"}\n");
        let mut out = Vec::new();
        let summary = merge_results(&[a.clone(), b.clone()], None, &mut out).unwrap();
        assert_eq!(summary, MergeSummary { results: 3, duplicates: 1, missing: 0 });
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 3);
        assert!(text.contains(r#"{"id":"y","status":"timeout"}"#), "the first result wins");
        let plan = temp_file("plan.jsonl", "{\"id\":\"x\"}\n{\"id\":\"w\"}\n");
        let message = format!("{:#}", merge_results(&[a], Some(&plan), &mut Vec::new()).unwrap_err());
        assert!(message.contains(r#""w" (line 2)"#), "{}", message);
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
        let (_, spec) = parse_line(r#"{"schema":3}"#, 1, &defaults());
        assert!(format!("{:#}", spec.unwrap_err()).contains("schema 3"));
        let (_, spec) = parse_line(r#"{"limits":{"memory":"12Q"}}"#, 5, &defaults());
        let message = format!("{:#}", spec.unwrap_err());
        assert!(message.contains("line 5") && message.contains("limits.memory"), "{}", message);
        let (_, spec) = parse_line(r#"{"limits":{"stack":1}}"#, 6, &defaults());
        assert!(format!("{:#}", spec.unwrap_err()).contains("stack"));
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
            resources: None,
        };
        let mut out = Vec::new();
        write_result(&mut out, &Value::from("m1"), &outcome).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.ends_with('\n') && text.matches('\n').count() == 1);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["schema"], 2);
        assert_eq!(v["limit"], Value::Null);
        assert_eq!(v["resources"], Value::Null);
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
