//! The gateway standalone (`fibon-verify gateway`): one session with a scenario's
//! fixtures, the platform's upstream MCP servers and the faults given, for any MCP client
//! to point at — refused before it serves when the scenario or a fault's tool names
//! nothing, since a typo must not pass for a test.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::{Catalog, Upstreams};
use super::{Fault, FaultPlan, Gateway, GatewayOptions, NotFoundStyle, SessionHandle, SessionSpec};
use crate::diag::did_you_mean;
use crate::errors::ExpectedError;
use crate::project::ValidProject;

/// What to serve.
#[derive(Debug, Clone)]
pub struct StandaloneSpec {
    /// The scenario whose fixtures to serve (its `id`).
    pub scenario: String,
    /// The faults to inject, by tool.
    pub faults: Vec<(String, Fault)>,
    /// Where to listen.
    pub bind: SocketAddr,
    /// How a removed tool answers `tools/call` over MCP.
    pub not_found_style: NotFoundStyle,
}

/// A session being served; [`Standalone::close`] ends it.
pub struct Standalone {
    scenario: String,
    skill: String,
    faults: Vec<(String, Fault)>,
    /// Upstream servers that could not be reached, and why.
    unreachable: Vec<(String, String)>,
    catalog: Arc<Catalog>,
    handle: SessionHandle,
    /// Serves as long as it is kept.
    _gateway: Gateway,
    upstreams: Arc<Upstreams>,
}

impl Standalone {
    /// Finds the scenario, binds the address (first: a port in use must not wait for
    /// upstream servers to start), connects the platform's servers and opens the session.
    /// Exit 64 for an unknown scenario, an address that cannot be used, or faults on tools
    /// the session does not serve (each one named).
    pub async fn start(
        project: &ValidProject,
        spec: StandaloneSpec,
    ) -> Result<Standalone, ExpectedError> {
        let Some(scenario) = project.scenarios.iter().find(|s| s.id == spec.scenario) else {
            let ids: Vec<&str> = project.scenarios.iter().map(|s| s.id.as_str()).collect();
            return Err(ExpectedError::Unknown {
                what: "scenario",
                value: spec.scenario.clone(),
                within: None,
                suggestion: did_you_mean(&spec.scenario, ids.iter().copied()).map(String::from),
                known: ids.iter().map(|s| s.to_string()).collect(),
            });
        };
        let config = &project.config;
        let addr = spec.bind;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(ExpectedError::listen(addr, true))?;
        let upstreams =
            Upstreams::connect(&config.platform.mcp_servers, Duration::from_secs(30)).await;
        let unreachable: Vec<(String, String)> = upstreams
            .servers()
            .iter()
            .filter_map(|s| s.error.as_ref().map(|e| (s.name.clone(), e.clone())))
            .collect();
        let options = GatewayOptions {
            bind: addr,
            timeout_fault_delay: config.matrix.timeout_fault_delay,
            latency_fault_delay: config.matrix.latency_fault_delay,
            not_found_style: spec.not_found_style,
            ..GatewayOptions::default()
        };
        let gateway = match Gateway::serve(listener, options, Arc::clone(&upstreams)) {
            Ok(gateway) => gateway,
            Err(e) => {
                upstreams.close().await;
                return Err(ExpectedError::listen(addr, true)(e));
            }
        };
        let mut plan = FaultPlan::none();
        for (tool, fault) in &spec.faults {
            plan.set(tool, Some(*fault));
        }
        let handle = gateway.open_session(SessionSpec {
            fixtures: scenario.tools.clone(),
            schema_drift: scenario.schema_drift.clone(),
            faults: plan,
        });
        let catalog = handle.session().catalog();
        // A fault on a tool nobody serves injects nothing: a typo must not pass for a test.
        let mut unserved: Vec<ExpectedError> = spec
            .faults
            .iter()
            .map(|(t, _)| t)
            .filter(|t| !catalog.tools.contains_key(*t))
            .map(|tool| ExpectedError::UnservedFault {
                tool: tool.clone(),
                suggestion: did_you_mean(tool, catalog.tools.keys().map(String::as_str))
                    .map(String::from),
                served: catalog.tools.keys().cloned().collect(),
            })
            .collect();
        if let Some(last) = unserved.pop() {
            let refused = last.preceded_by(unserved);
            drop(handle);
            drop(gateway);
            upstreams.close().await;
            return Err(refused);
        }
        Ok(Standalone {
            scenario: scenario.id.clone(),
            skill: scenario.skill.clone(),
            faults: spec.faults,
            unreachable,
            catalog,
            handle,
            _gateway: gateway,
            upstreams,
        })
    }

    /// What is served, for a person (stderr): the URLs, the tools, the faults and the
    /// catalog's problems.
    pub fn banner(&self) -> String {
        let mut lines = vec![
            format!(
                "gateway for scenario `{}` (skill `{}`)",
                self.scenario, self.skill
            ),
            format!("REST  {}", self.handle.tools_url()),
            format!("MCP   {}", self.handle.mcp_url()),
        ];
        let tools: Vec<String> = self
            .catalog
            .tools
            .iter()
            .map(|(n, e)| format!("{n} ({})", e.provenance))
            .collect();
        lines.push(format!(
            "tools: {}",
            if tools.is_empty() {
                "none".into()
            } else {
                tools.join(", ")
            }
        ));
        for (tool, fault) in &self.faults {
            lines.push(format!("fault: {tool} = {}", fault.kind));
        }
        for p in &self.catalog.problems {
            lines.push(format!("warning: {p}"));
        }
        lines.push("serving until Ctrl-C".into());
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    /// The URLs, for scripts (one JSON line on stdout).
    pub fn urls(&self) -> serde_json::Value {
        json!({"tools_url": self.handle.tools_url(), "mcp_url": self.handle.mcp_url()})
    }

    /// The session's trace so far, as pretty JSON (with its `truncated` note when the
    /// agent made more calls than the trace keeps).
    pub fn trace(&self) -> String {
        let recorded = self.handle.recorded();
        let mut trace = json!({
            "scenario": self.scenario,
            "session": self.handle.session().id,
            "events": recorded.events,
        });
        if let Some(note) = recorded.truncated {
            trace["truncated"] = json!(note);
        }
        serde_json::to_string_pretty(&trace).expect("a Value serializes")
    }

    /// Stops serving. Upstream servers that could not be reached are the command's
    /// failure (69), though the session was served without them.
    pub async fn close(self) -> Result<(), ExpectedError> {
        self.upstreams.close().await;
        if !self.unreachable.is_empty() {
            return Err(ExpectedError::ServersDown {
                servers: self.unreachable,
                before_cells: false,
            });
        }
        Ok(())
    }
}

/// Serves until `stop` (a signal) or, with `serve_for`, until that time is up or `stop`
/// comes first. Returns whether it was cut short: a signal during `serve_for`.
pub async fn serve_until(
    serve_for: Option<Duration>,
    stop: impl std::future::Future<Output = ()>,
) -> bool {
    match serve_for {
        Some(d) => tokio::select! {
            () = tokio::time::sleep(d) => false,
            () = stop => true,
        },
        None => {
            stop.await;
            false
        }
    }
}
