//! `fibon-verify init`: starts a project. With no flags it scaffolds one that runs at once
//! (fibon.yaml, a contract, a simple and a complex scenario with fixtures, an example
//! agent); `--from-mcp` and `--from-skill` draft a contract from an MCP server's tools or
//! an Agent Skill's `SKILL.md`, for the user to complete. It creates the folders it needs
//! and never overwrites a file without `--force`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::Globals;
use crate::errors::ExpectedError;
use crate::exit_code;
use crate::probe::draft;
use crate::project;

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("from").multiple(false).args(["from_mcp", "from_skill"])))]
pub(crate) struct InitArgs {
    /// Draft from the tools of this MCP server (a name in `platform.mcp_servers`).
    #[arg(long, value_name = "SERVER")]
    from_mcp: Option<String>,

    /// Draft from an Agent Skill's SKILL.md (frontmatter: name, description, allowed-tools).
    #[arg(long, value_name = "SKILL.md")]
    from_skill: Option<PathBuf>,

    /// Where to write the draft [default: contracts/SKILL.yaml]
    #[arg(long, value_name = "PATH")]
    out: Option<PathBuf>,

    /// Overwrite an existing file.
    #[arg(long)]
    force: bool,
}

/// The scaffolded project: paths relative to the config's folder, and their contents.
const SCAFFOLD: [(&str, &str); 5] = [
    ("fibon.yaml", include_str!("scaffold/fibon.yaml")),
    (
        "contracts/weather.yaml",
        include_str!("scaffold/contracts/weather.yaml"),
    ),
    (
        "scenarios/weather/simple.yaml",
        include_str!("scaffold/scenarios/weather/simple.yaml"),
    ),
    (
        "scenarios/weather/complex.yaml",
        include_str!("scaffold/scenarios/weather/complex.yaml"),
    ),
    ("agent.py", include_str!("scaffold/agent.py")),
];

pub(crate) fn run(globals: &Globals, args: InitArgs) -> Result<i32, ExpectedError> {
    let drafted = match (&args.from_mcp, &args.from_skill) {
        (None, None) => return scaffold(globals, args.force),
        (Some(name), _) => {
            let config = super::require_config(globals)?;
            ensure_project_dirs(config)?;
            let loaded = project::load_config(config);
            // Drafting needs only the config; when it does not load, its own errors say why.
            let Some(valid) = loaded.project.config else {
                return Err(ExpectedError::InvalidProject {
                    diagnostics: loaded
                        .diagnostics
                        .into_iter()
                        .filter(|d| d.is_error())
                        .collect(),
                });
            };
            let servers = valid.platform.mcp_servers;
            let Some(server) = servers.iter().find(|s| &s.name == name) else {
                return Err(ExpectedError::Unknown {
                    what: "MCP server",
                    value: name.clone(),
                    within: Some(format!(
                        "platform.mcp_servers of {}",
                        globals.config.display()
                    )),
                    suggestion: crate::diag::did_you_mean(
                        name,
                        servers.iter().map(|s| s.name.as_str()),
                    )
                    .map(String::from),
                    known: servers.iter().map(|s| s.name.clone()).collect(),
                });
            };
            let runtime = super::runtime()?;
            let drafted = runtime.block_on(draft::from_mcp(server, Duration::from_secs(30)))?;
            (drafted, Some(valid.platform.plugins))
        }
        (None, Some(path)) => {
            super::check_input(path)?;
            (draft::from_skill(path)?, None)
        }
    };
    let (drafted, plugins) = drafted;
    let out = args
        .out
        .unwrap_or_else(|| PathBuf::from("contracts").join(format!("{}.yaml", drafted.skill)));
    if out.exists() && !args.force {
        return Err(ExpectedError::Exists { path: out });
    }
    write(&out, &drafted.yaml)?;
    let mut err = super::stderr();
    writeln!(
        err,
        "wrote {} (skill `{}`); complete its TODOs, then run `fibon-verify check`",
        out.display(),
        drafted.skill
    )?;
    // The draft's preconditions name the server as a plugin: `probe` compares its
    // min_plugin_version with platform.plugins, which must list it.
    if let (Some((plugin, version)), Some(plugins)) = (&drafted.plugin, plugins)
        && !plugins.contains_key(plugin)
    {
        if semver::Version::parse(version).is_ok() {
            writeln!(
                err,
                "add to {} so that `fibon-verify probe` passes:\n  platform:\n    plugins: {{{plugin}: \"{version}\"}}",
                globals.config.display()
            )?;
        } else {
            writeln!(
                err,
                "the server reports version `{version}`, not a semver version: list `{plugin}` under platform.plugins of {} with its installed version, or drop `plugin` from the draft's preconditions",
                globals.config.display()
            )?;
        }
    }
    Ok(exit_code::SUCCESS)
}

/// Writes the scaffold beside the config (`--config`, default `./fibon.yaml`): every file
/// or none — an existing one stops it before anything is written, unless `force`.
fn scaffold(globals: &Globals, force: bool) -> Result<i32, ExpectedError> {
    let root = globals
        .config
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let target = |rel: &str| {
        if rel == "fibon.yaml" {
            globals.config.clone()
        } else if root == Path::new(".") {
            PathBuf::from(rel)
        } else {
            root.join(rel)
        }
    };
    if !force && let Some((rel, _)) = SCAFFOLD.iter().find(|(rel, _)| target(rel).exists()) {
        return Err(ExpectedError::Exists { path: target(rel) });
    }
    for (rel, text) in SCAFFOLD {
        write(&target(rel), text)?;
    }
    let mut err = super::stderr();
    for (rel, _) in SCAFFOLD {
        writeln!(err, "wrote {}", target(rel).display())?;
    }
    writeln!(
        err,
        "a project with one Skill (`weather`) and an example agent (agent.py, needs python3): `fibon-verify run` runs its matrix; then replace agent.py with your agent (docs/agent-protocol.md)"
    )?;
    Ok(exit_code::SUCCESS)
}

/// Creates the contract and scenario folders the config names (default `contracts/` and
/// `scenarios/`), so that a folder holding only fibon.yaml loads.
fn ensure_project_dirs(config: &Path) -> Result<(), ExpectedError> {
    let root = config.parent().unwrap_or(Path::new("."));
    let text = std::fs::read_to_string(config).unwrap_or_default();
    let value: serde_yaml::Value = serde_yaml::from_str(&text).unwrap_or_default();
    for (key, default) in [("contracts", "contracts"), ("scenarios", "scenarios")] {
        let dirs: Vec<String> = match value.get(key).and_then(|v| v.as_sequence()) {
            Some(list) => list
                .iter()
                .filter_map(|d| d.as_str().map(String::from))
                .collect(),
            None => vec![default.to_string()],
        };
        for d in dirs {
            let dir = root.join(d);
            if !dir.exists() {
                std::fs::create_dir_all(&dir).map_err(ExpectedError::unwritable(&dir))?;
            }
        }
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<(), ExpectedError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(ExpectedError::unwritable(dir))?;
    }
    // A server's tool descriptions may echo the headers it was sent.
    let text = crate::secrets::current().redact(text).into_owned();
    std::fs::write(path, text).map_err(ExpectedError::unwritable(path))
}
