//! Command-line front end: `fuzz <target|all|list> [--iterations N] [--seed S]`.

use mfdb_fuzz::driver::fuzz;
use mfdb_fuzz::targets::TARGETS;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = args.first().map(String::as_str).unwrap_or("list");
    let flag = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
    };
    let iterations: u64 = flag("--iterations").unwrap_or(1_000_000);
    let seed: u64 = flag("--seed").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    if name == "list" {
        for target in TARGETS {
            println!("{}", target.name);
        }
        return ExitCode::SUCCESS;
    }
    let chosen: Vec<_> = TARGETS
        .iter()
        .filter(|t| name == "all" || t.name == name)
        .collect();
    if chosen.is_empty() {
        eprintln!("no fuzz target named {name:?}; try `list`");
        return ExitCode::FAILURE;
    }
    for target in chosen {
        println!("fuzz {}: seed {seed}, {iterations} iterations", target.name);
        let started = std::time::Instant::now();
        if let Err(input) = fuzz(target, seed, iterations) {
            let hex: String = input.iter().map(|b| format!("{b:02x}")).collect();
            eprintln!(
                "fuzz {}: PANIC with seed {seed}; input ({} bytes): {hex}",
                target.name,
                input.len()
            );
            return ExitCode::FAILURE;
        }
        println!("fuzz {}: ok in {:.1?}", target.name, started.elapsed());
    }
    ExitCode::SUCCESS
}
