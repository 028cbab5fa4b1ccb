//! The thin binary: parse arguments, set up logging, call the library, map
//! the outcome to an exit code.

use anyhow::Result;
use jitrun::cli::{Cli, Input};
use jitrun::{Limits, LinkOptions, Linker, EXIT_JITRUN_ERROR};

fn main() {
    let (cli, inputs) = match Cli::parse_ordered(std::env::args_os()) {
        Ok(parsed) => parsed,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_JITRUN_ERROR } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    init_logging(cli.verbose);
    match run(&cli, &inputs) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("jitrun: error: {:#}", e);
            std::process::exit(EXIT_JITRUN_ERROR);
        }
    }
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "debug",
        _ => "trace",
    };
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(default))
        .format_timestamp(None)
        .target(env_logger::Target::Stderr)
        .init();
}

fn run(cli: &Cli, inputs: &[Input]) -> Result<i32> {
    let options = LinkOptions {
        search_paths: cli.library_path.clone(),
        defines: cli.defines().map_err(anyhow::Error::msg)?,
        allow_unresolved: cli.allow_unresolved,
        static_libs: cli.static_libs,
        base: cli.base,
        limits: Limits { max_image_size: cli.max_image_size },
    };
    let mut linker = Linker::new(options);
    for input in inputs {
        match input {
            Input::File(path) => linker.add_file(path)?,
            Input::Library(name) => linker.add_library(name)?,
        }
    }
    let mut image = linker.link()?;
    if cli.noexec {
        return Ok(0);
    }
    let program = cli.inputs[0].to_string_lossy().into_owned();
    jitrun::image::prepare_process_for_program();
    let status = image.run_main(&cli.entry, &program, &cli.args)?;
    image.exit(status)
}
