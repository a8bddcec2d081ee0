//! A contract's preconditions against what the probe found: each unmet one named, and the
//! Skill's availability — `available`, `restricted` (a non-critical Skill with unmet
//! preconditions: it may run, listed as limited) or `unavailable` (a critical one: it must
//! not, and the probe fails).

use serde::Serialize;

use super::compat;
use super::network::Reachability;
use crate::config::Platform;
use crate::contract::Contract;
use crate::gateway::Catalog;

/// A Skill's availability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Availability {
    /// Every precondition holds.
    Available,
    /// A non-critical Skill with unmet preconditions.
    Restricted,
    /// A critical Skill with unmet preconditions.
    Unavailable,
}

impl Availability {
    /// The name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Availability::Available => "available",
            Availability::Restricted => "restricted",
            Availability::Unavailable => "unavailable",
        }
    }
}

/// One unmet precondition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unmet {
    /// `tool`, `plugin`, `scope`, `network` or `schema_drift`.
    pub kind: &'static str,
    /// What is wrong, for people.
    pub message: String,
}

/// One Skill's result.
#[derive(Debug, Clone, Serialize)]
pub struct SkillReport {
    /// The Skill.
    pub skill: String,
    /// Whether an unmet precondition fails the probe.
    pub critical: bool,
    /// The verdict.
    pub availability: Availability,
    /// Every unmet precondition.
    pub unmet: Vec<Unmet>,
    /// The contract file.
    pub source: String,
    /// The line of the skill's name there.
    pub line: usize,
}

pub(crate) fn evaluate(
    c: &Contract,
    platform: &Platform,
    catalog: &Catalog,
    network: &Reachability,
) -> SkillReport {
    let mut unmet = Vec::new();
    for tool in &c.preconditions.tools {
        if !catalog.tools.contains_key(tool) {
            let offered_by: Vec<&str> = catalog
                .tools
                .keys()
                .filter(|k| k.rsplit_once(':').is_some_and(|(_, t)| t == tool))
                .map(String::as_str)
                .collect();
            let message = match offered_by.as_slice() {
                [] => format!("tool `{tool}` is not offered by any MCP server of the platform"),
                names => format!(
                    "tool `{tool}` is ambiguous: offered as {}",
                    names.join(", ")
                ),
            };
            unmet.push(Unmet {
                kind: "tool",
                message,
            });
        }
    }
    if let Some(plugin) = &c.preconditions.plugin {
        match (
            platform.plugins.get(plugin),
            &c.preconditions.min_plugin_version,
        ) {
            (None, _) => unmet.push(Unmet {
                kind: "plugin",
                message: format!("plugin `{plugin}` is not installed (not in platform.plugins)"),
            }),
            (Some(v), Some(req)) if !req.matches(v) => unmet.push(Unmet {
                kind: "plugin",
                message: format!("plugin `{plugin}` is {v}, which does not satisfy {req}"),
            }),
            _ => {}
        }
    }
    for scope in &c.preconditions.scopes {
        if !platform.scopes.contains(scope) {
            unmet.push(Unmet {
                kind: "scope",
                message: format!("scope `{scope}` is not granted (not in platform.scopes)"),
            });
        }
    }
    for name in &c.preconditions.network {
        match network.get(name) {
            None => unmet.push(Unmet {
                kind: "network",
                message: format!("network endpoint `{name}` is not in platform.network"),
            }),
            Some(Err(why)) => unmet.push(Unmet {
                kind: "network",
                message: format!("network endpoint `{name}` is unreachable: {why}"),
            }),
            Some(Ok(())) => {}
        }
    }
    let primary = c
        .trace
        .must_call_tools
        .first()
        .or(c.preconditions.tools.first());
    if let (Some(schema), Some(tool)) = (&c.io.input_schema, primary)
        && let Some(entry) = catalog.tools.get(tool)
    {
        let advertised = entry
            .descriptor
            .get("inputSchema")
            .cloned()
            .unwrap_or_default();
        for problem in compat::incompatibilities(schema, &advertised) {
            unmet.push(Unmet {
                kind: "schema_drift",
                message: format!("SCHEMA_DRIFT on `{tool}` ({}): {problem}", entry.provenance),
            });
        }
    }
    let availability = match (unmet.is_empty(), c.critical) {
        (true, _) => Availability::Available,
        (false, true) => Availability::Unavailable,
        (false, false) => Availability::Restricted,
    };
    SkillReport {
        skill: c.skill.clone(),
        critical: c.critical,
        availability,
        unmet,
        source: c.source.display().to_string(),
        line: c.source_line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn availability_names_are_the_reports() {
        for a in [
            Availability::Available,
            Availability::Restricted,
            Availability::Unavailable,
        ] {
            assert_eq!(serde_json::to_value(a).unwrap(), a.as_str());
        }
    }
}
