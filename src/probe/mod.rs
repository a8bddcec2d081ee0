//! The capability probe: before the first real request, on the target platform, is each
//! Skill's capability really there? Connects to every MCP server of the platform, flattens
//! their tools, checks each contract's preconditions (tools, plugin version, scopes,
//! network, input-schema compatibility) and compares the tools with the lockfile, so that
//! version drift and tampered descriptions are caught. [`preflight`] is the same check
//! as `run` makes it before any cell.

mod compat;
pub mod draft;
pub mod lock;
mod network;
mod preconditions;
pub mod report;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

pub use lock::{LockChange, LockError, LockFile, LockReport, LockStatus};
pub use preconditions::{Availability, SkillReport, Unmet};

use crate::config::Config;
use crate::contract::Contract;
use crate::errors::ExpectedError;
use crate::exit_code;
use crate::gateway::{Catalog, Upstreams};
use crate::project::ValidProject;

/// How to probe.
#[derive(Debug, Clone)]
pub struct ProbeOptions {
    /// Per server: connecting and listing.
    pub server_timeout: Duration,
    /// Per network endpoint.
    pub network_timeout: Duration,
    /// The lockfile.
    pub lock_path: PathBuf,
    /// Write the lockfile from what was found.
    pub update_lock: bool,
    /// Report lock drift without failing.
    pub allow_drift: bool,
}

/// One upstream server as found.
#[derive(Debug, Clone, Serialize)]
pub struct ServerReport {
    /// Its configured name.
    pub name: String,
    /// Whether it could be reached and listed.
    pub reachable: bool,
    /// Why not, or what went wrong listing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `serverInfo.name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_name: Option<String>,
    /// `serverInfo.version`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    /// The protocol version spoken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// Tools listed (valid ones).
    pub tools: usize,
    /// Malformed tools and similar, each naming the tool.
    pub problems: Vec<String>,
    /// How long connecting and listing took.
    pub duration_ms: u64,
}

/// The whole probe.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeReport {
    /// `fibon.probe/v1`.
    pub schema: &'static str,
    /// Each server.
    pub servers: Vec<ServerReport>,
    /// Each Skill.
    pub skills: Vec<SkillReport>,
    /// The lockfile comparison.
    pub lock: LockReport,
    /// The exit code this report implies.
    pub exit_code: i32,
}

/// `fibon-verify probe`: probes the project's platform for its contracts. With
/// `update_lock`, the lockfile is checked writable first (exit 64), not after probing
/// every server.
pub fn run(project: &ValidProject, options: &ProbeOptions) -> Result<ProbeReport, ExpectedError> {
    if options.update_lock {
        crate::source::check_output_file(&options.lock_path)?;
    }
    let runtime = crate::errors::runtime()?;
    Ok(runtime.block_on(probe(&project.config, &project.contracts, options)))
}

/// The platform checked before any cell of a run: a server that is down would pass for a
/// removed tool in every cell (69), and drifted tools make every verdict suspect (4,
/// unless `allow_drift`). Drift ranks above an unreachable server, so the lockfile at
/// `lock_path` — when there is one and the platform has servers — is compared first, and
/// the servers that are down are said too.
pub fn preflight(
    upstreams: &Upstreams,
    lock_path: &Path,
    allow_drift: bool,
) -> Result<(), ExpectedError> {
    let down: Vec<(String, String)> = upstreams
        .servers()
        .iter()
        .filter(|s| s.client().is_none())
        .map(|s| {
            (
                s.name.clone(),
                s.error.clone().unwrap_or_else(|| "no reason given".into()),
            )
        })
        .collect();
    let down_names: Vec<String> = down.iter().map(|(name, _)| name.clone()).collect();
    // A lockfile that is there but cannot be read (a folder, say) fails, as in `probe`.
    if !upstreams.servers().is_empty() && lock_path.exists() {
        let current = LockFile::from_catalog(
            &Catalog::build(&indexmap::IndexMap::new(), upstreams),
            upstreams,
        );
        let lock = lock::compare(lock_path, &current, &down_names, false, allow_drift);
        if lock.failing() {
            let drifted = ExpectedError::LockFailed {
                path: lock_path.to_path_buf(),
                reason: lock.error.clone(),
                changes: lock
                    .changes
                    .iter()
                    .filter(|c| c.failing)
                    .map(|c| c.detail.clone())
                    .collect(),
            };
            // Said too, though the drift (exit 4) is what ends the run.
            let earlier = if down.is_empty() {
                Vec::new()
            } else {
                vec![ExpectedError::ServersDown {
                    servers: down,
                    before_cells: false,
                }]
            };
            return Err(drifted.preceded_by(earlier));
        }
    }
    if !down.is_empty() {
        return Err(ExpectedError::ServersDown {
            servers: down,
            before_cells: true,
        });
    }
    Ok(())
}

/// Probes the platform of `config` for the `contracts`.
pub async fn probe(config: &Config, contracts: &[Contract], options: &ProbeOptions) -> ProbeReport {
    let started = Instant::now();
    let upstreams = Upstreams::connect(&config.platform.mcp_servers, options.server_timeout).await;
    let connect_ms = started.elapsed().as_millis() as u64;
    let catalog = Catalog::build(&indexmap::IndexMap::new(), &upstreams);
    let servers: Vec<ServerReport> = upstreams
        .servers()
        .iter()
        .map(|s| {
            let id = s.identity();
            let prefix = format!("server `{}`", s.name);
            ServerReport {
                name: s.name.clone(),
                reachable: s.client().is_some(),
                error: s.error.clone(),
                server_name: id.map(|i| i.name.clone()),
                server_version: id.map(|i| i.version.clone()),
                protocol_version: id.map(|i| i.protocol_version.clone()),
                tools: catalog
                    .tools
                    .values()
                    .filter(|e| e.provenance.starts_with(&format!("{}:", s.name)))
                    .count(),
                problems: catalog
                    .problems
                    .iter()
                    .filter(|p| p.starts_with(&prefix))
                    .cloned()
                    .collect(),
                duration_ms: connect_ms,
            }
        })
        .collect();
    let endpoints = network::check_all(&config.platform.network, options.network_timeout).await;
    let skills = contracts
        .iter()
        .map(|c| preconditions::evaluate(c, &config.platform, &catalog, &endpoints))
        .collect::<Vec<_>>();
    let current = LockFile::from_catalog(&catalog, &upstreams);
    let unreachable: Vec<String> = servers
        .iter()
        .filter(|s| !s.reachable)
        .map(|s| s.name.clone())
        .collect();
    let lock = lock::compare(
        &options.lock_path,
        &current,
        &unreachable,
        options.update_lock,
        options.allow_drift,
    );
    upstreams.close().await;
    let mut codes = Vec::new();
    if skills
        .iter()
        .any(|s| s.critical && s.availability == Availability::Unavailable)
        || lock.failing()
    {
        codes.push(exit_code::PROBE_FAILED);
    }
    if servers.iter().any(|s| !s.reachable) {
        codes.push(exit_code::UNAVAILABLE);
    }
    ProbeReport {
        schema: "fibon.probe/v1",
        servers,
        skills,
        lock,
        exit_code: exit_code::combine(codes),
    }
}
