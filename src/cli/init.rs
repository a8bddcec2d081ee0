//! `fibon-verify init`: writes a draft contract from an MCP server's tools or from an
//! Agent Skill's `SKILL.md`, for the user to complete.

use std::path::PathBuf;
use std::time::Duration;

use super::Globals;
use crate::errors::ExpectedError;
use crate::exit_code;
use crate::probe::draft;
use crate::project;

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("from").required(true).multiple(false).args(["from_mcp", "from_skill"])))]
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

pub(crate) fn run(globals: &Globals, args: InitArgs) -> Result<i32, ExpectedError> {
    let drafted = match (&args.from_mcp, &args.from_skill) {
        (Some(name), _) => {
            let loaded = project::load_config(super::require_config(globals)?);
            let servers = loaded
                .project
                .config
                .map(|c| c.platform.mcp_servers)
                .unwrap_or_default();
            let Some(server) = servers.iter().find(|s| &s.name == name) else {
                return Err(ExpectedError::Unknown {
                    what: "MCP server",
                    value: name.clone(),
                    within: Some(format!(
                        "platform.mcp_servers of {}",
                        globals.config.display()
                    )),
                    suggestion: None,
                    known: servers.iter().map(|s| s.name.clone()).collect(),
                });
            };
            let runtime = super::runtime()?;
            runtime.block_on(draft::from_mcp(server, Duration::from_secs(30)))?
        }
        (None, Some(path)) => {
            super::check_input(path)?;
            draft::from_skill(path)?
        }
        (None, None) => unreachable!("clap requires one of --from-mcp and --from-skill"),
    };
    let out = args
        .out
        .unwrap_or_else(|| PathBuf::from("contracts").join(format!("{}.yaml", drafted.skill)));
    if out.exists() && !args.force {
        return Err(ExpectedError::Exists { path: out });
    }
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(ExpectedError::unwritable(dir))?;
    }
    std::fs::write(&out, drafted.yaml).map_err(ExpectedError::unwritable(&out))?;
    eprintln!(
        "wrote {} (skill `{}`); complete its TODOs, then run `fibon-verify check`",
        out.display(),
        drafted.skill
    );
    Ok(exit_code::SUCCESS)
}
