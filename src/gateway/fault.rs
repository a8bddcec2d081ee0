//! Fault plans: which fault hits which tool in one session. Faults are per session and
//! per tool, and can change mid-session (the runner removes a tool; the gateway then
//! tells MCP clients the list changed).

use std::collections::BTreeMap;
use std::time::Duration;

use crate::contract::FaultKind;

/// How a removed tool answers `tools/call` over MCP: the two styles real servers use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum NotFoundStyle {
    /// A JSON-RPC error -32602, as Python SDK servers answer.
    #[default]
    JsonrpcError,
    /// A result with `isError: true`, as TypeScript SDK servers answer.
    IsError,
}

/// One fault on one tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    /// The kind.
    pub kind: FaultKind,
    /// For TIMEOUT and LATENCY: the delay (None: the gateway's default for the kind).
    pub delay: Option<Duration>,
}

impl Fault {
    /// A fault with the default delay.
    pub fn new(kind: FaultKind) -> Fault {
        Fault { kind, delay: None }
    }
}

/// Faults by tool name (the exposed name).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultPlan {
    faults: BTreeMap<String, Fault>,
}

impl FaultPlan {
    /// An empty plan: every tool available.
    pub fn none() -> FaultPlan {
        FaultPlan::default()
    }

    /// The same fault on each of `tools`.
    pub fn on(tools: &[String], fault: Fault) -> FaultPlan {
        FaultPlan {
            faults: tools.iter().map(|t| (t.clone(), fault)).collect(),
        }
    }

    /// Sets (or with `None` clears) the fault of a tool.
    pub fn set(&mut self, tool: &str, fault: Option<Fault>) {
        match fault {
            Some(f) => self.faults.insert(tool.to_string(), f),
            None => self.faults.remove(tool),
        };
    }

    /// The fault on a tool, if any.
    pub fn get(&self, tool: &str) -> Option<Fault> {
        self.faults.get(tool).copied()
    }

    /// Every (tool, fault).
    pub fn iter(&self) -> impl Iterator<Item = (&str, Fault)> {
        self.faults.iter().map(|(t, f)| (t.as_str(), *f))
    }

    /// Parses `TOOL=KIND` or `TOOL=KIND:DELAY` (`read_page=TIMEOUT:2s`).
    pub fn parse_spec(spec: &str) -> Result<(String, Fault), String> {
        let (tool, rest) = spec.split_once('=').ok_or_else(|| {
            format!("`{spec}` is not TOOL=KIND (such as `read_page=TOOL_NOT_FOUND`)")
        })?;
        let (kind, delay) = match rest.split_once(':') {
            Some((k, d)) => (
                k,
                Some(humantime::parse_duration(d).map_err(|e| format!("bad delay `{d}`: {e}"))?),
            ),
            None => (rest, None),
        };
        let kind: FaultKind = kind.parse()?;
        if delay.is_some() && !kind.takes_delay() {
            return Err(format!("only TIMEOUT and LATENCY take a delay, not {kind}"));
        }
        if tool.is_empty() {
            return Err(format!("`{spec}` names no tool"));
        }
        Ok((tool.to_string(), Fault { kind, delay }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fault_specs() {
        assert_eq!(
            FaultPlan::parse_spec("read_page=TOOL_NOT_FOUND").unwrap(),
            ("read_page".into(), Fault::new(FaultKind::ToolNotFound))
        );
        assert_eq!(
            FaultPlan::parse_spec("echo=timeout:250ms").unwrap().1,
            Fault {
                kind: FaultKind::Timeout,
                delay: Some(Duration::from_millis(250))
            }
        );
        assert!(FaultPlan::parse_spec("echo").is_err());
        assert!(
            FaultPlan::parse_spec("echo=NOPE")
                .unwrap_err()
                .contains("unknown fault kind")
        );
        assert!(FaultPlan::parse_spec("echo=EMPTY_RESULT:1s").is_err());
        assert!(FaultPlan::parse_spec("=EMPTY_RESULT").is_err());
    }
}
