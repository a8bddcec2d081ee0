//! Raw contract -> [`Contract`]: the semantic checks the schema cannot express (a skill
//! name given once, rules that parse, regexes that compile, a valid input schema, a valid
//! semver requirement, absolute whitelist URLs) and the documented defaults.

use std::path::Path;

use serde_json::Value;

use super::model::*;
use super::raw::{RawContract, RawSchemaRef, RawTraceRules};
use super::rule::Rule;
use crate::diag::Diagnostic;
use crate::source::{Anchor, Document, SourceFile, join};

/// Validates a raw contract; problems go to `diags`. `None` when any is an error.
pub fn validate(doc: &Document, raw: RawContract, diags: &mut Vec<Diagnostic>) -> Option<Contract> {
    let before = diags.iter().filter(|d| d.is_error()).count();
    let skill = skill_name(doc, &raw, diags);
    let trace = trace_rules(doc, &raw, diags);
    let pre = raw.preconditions.unwrap_or_default();
    let min_plugin_version = pre.min_plugin_version.as_deref().and_then(|req| {
        semver::VersionReq::parse(req)
            .map_err(|e| {
                diags.push(
                    doc.error(
                        "invalid_version_req",
                        "/preconditions/min_plugin_version",
                        Anchor::Value,
                        format!("`{req}` is not a semver requirement: {e}"),
                        "not a semver requirement",
                    )
                    .with_help("write a requirement such as `>=1.4.0`, `^2.1` or `>=1.4, <2`"),
                )
            })
            .ok()
    });
    if pre.min_plugin_version.is_some() && pre.plugin.is_none() {
        diags.push(
            doc.warning(
                "version_without_plugin",
                "/preconditions/min_plugin_version",
                Anchor::Key,
                "`min_plugin_version` without `plugin`: the probe has no plugin to check",
                "no plugin named",
            )
            .with_help("add `plugin: NAME` under `preconditions`"),
        );
    }
    let io = raw.io_contract.map(|io| {
        let input_schema = io.input_schema.and_then(|s| input_schema(doc, s, diags));
        let output_assertions = io
            .output_assertions
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .filter_map(|(i, a)| {
                let base = format!("/io_contract/output_assertions/{i}");
                let path = serde_json_path::JsonPath::parse(&a.path).map_err(|e| {
                    diags.push(
                        doc.error(
                            "invalid_jsonpath",
                            &join(&base, "path"),
                            Anchor::Value,
                            format!("invalid JSONPath `{}`: {e}", a.path),
                            "not an RFC 9535 JSONPath",
                        )
                        .with_help("write an RFC 9535 JSONPath such as `$.results[*].url`"),
                    )
                });
                let rule = Rule::parse(&a.rule).map_err(|e| {
                    diags.push(
                        doc.error(
                            "invalid_rule",
                            &join(&base, "rule"),
                            Anchor::Value,
                            e.message,
                            "cannot parse this rule",
                        )
                        .with_help(e.help),
                    )
                });
                Some(OutputAssertion {
                    singular: super::rule::is_singular(&a.path),
                    path_text: a.path,
                    path: path.ok()?,
                    rule_text: a.rule,
                    rule: rule.ok()?,
                })
            })
            .collect();
        IoContract {
            input_schema,
            output_assertions,
        }
    });
    let mut failure_semantics = raw.failure_semantics.unwrap_or_default();
    for kind in FaultKind::DEFAULTED {
        failure_semantics.entry(kind).or_insert(Semantics::Explicit);
    }
    let degradation = raw
        .degradation
        .map_or_else(Degradation::default, |d| Degradation {
            mode: d.mode.unwrap_or_default(),
            message_template: d.message_template.filter(|m| !m.trim().is_empty()),
            allow_model_fallback: d.allow_model_fallback.unwrap_or(false),
        });
    let preconditions = Preconditions {
        tools: pre.tools.unwrap_or_else(|| trace.must_call_tools.clone()),
        plugin: pre.plugin,
        min_plugin_version,
        scopes: pre.scopes.unwrap_or_default(),
        network: pre.network.unwrap_or_default(),
    };
    let risk_level = raw.risk_level.unwrap_or_default();
    let accept_degraded_at_risk = raw.accept_degraded_at_risk.unwrap_or(false);
    risk_grading(
        doc,
        risk_level,
        accept_degraded_at_risk,
        &degradation,
        diags,
    );
    let requires_approval = raw.requires_approval.unwrap_or(false);
    let approval = approval_tools(
        doc,
        requires_approval,
        raw.approval,
        &preconditions.tools,
        &trace.must_call_tools,
        diags,
    );
    let mut actions = raw.actions.unwrap_or_default();
    check_tool_names(doc, "/actions", &actions, diags);
    for tool in &approval {
        if !actions.contains(tool) {
            actions.push(tool.clone());
        }
    }
    let failed = diags.iter().filter(|d| d.is_error()).count() > before;
    (!failed).then(|| Contract {
        skill: skill.unwrap_or_default(),
        version: raw.version,
        risk_level,
        requires_approval,
        approval,
        actions,
        accept_degraded_at_risk,
        critical: raw.critical.unwrap_or(true),
        preconditions,
        io: io.unwrap_or_default(),
        failure_semantics,
        degradation,
        trace,
        source: doc.file.path.clone(),
        source_line: {
            let key = if doc.get("/skill").is_some() {
                "/skill"
            } else {
                "/skill_name"
            };
            doc.file.line_col(doc.span(key, Anchor::Value).start).0
        },
    })
}

/// At high or critical risk, no answer is better than a wrong one: a contract that lets
/// the model fill a gap, or answers partially, must say the business accepts it.
fn risk_grading(
    doc: &Document,
    risk: RiskLevel,
    accepted: bool,
    degradation: &Degradation,
    diags: &mut Vec<Diagnostic>,
) {
    if !risk.is_high() {
        if accepted {
            diags.push(
                doc.warning(
                    "accept_degraded_at_risk",
                    "/accept_degraded_at_risk",
                    Anchor::Key,
                    format!("`accept_degraded_at_risk` has no effect at `risk_level: {risk}`"),
                    "not needed below high risk",
                )
                .with_help(
                    "degraded answers need no consent below `risk_level: high`; remove the key",
                ),
            );
        }
        return;
    }
    if accepted {
        return;
    }
    let help = format!(
        "at `risk_level: {risk}` no answer is better than a wrong one; if the business accepts degraded answers for this Skill, say so with `accept_degraded_at_risk: true`"
    );
    if degradation.allow_model_fallback {
        diags.push(
            doc.error(
                "risk_degradation",
                "/degradation/allow_model_fallback",
                Anchor::Value,
                format!("`allow_model_fallback: true` at `risk_level: {risk}`: an unmarked answer under a fault would be let through"),
                "refused at this risk level",
            )
            .with_help(help.clone()),
        );
    }
    if degradation.mode == DegradationMode::DegradedWithMarker {
        diags.push(
            doc.error(
                "risk_degradation",
                "/degradation/mode",
                Anchor::Value,
                format!("`degradation.mode: degraded_with_marker` at `risk_level: {risk}`: a partial answer would pass"),
                "refused at this risk level",
            )
            .with_help(format!("use `refuse_with_reason` or `hard_fail`; {help}")),
        );
    }
}

/// The tools whose calls need approval: every tool of the Skill under
/// `requires_approval: true`, else those `approval` lists.
fn approval_tools(
    doc: &Document,
    requires_approval: bool,
    listed: Option<Vec<String>>,
    tools: &[String],
    must_call: &[String],
    diags: &mut Vec<Diagnostic>,
) -> Vec<String> {
    if let Some(listed) = &listed {
        check_tool_names(doc, "/approval", listed, diags);
    }
    if !requires_approval {
        return listed.unwrap_or_default();
    }
    if listed.is_some() {
        diags.push(
            doc.warning(
                "approval_given_twice",
                "/approval",
                Anchor::Key,
                "`approval` lists some tools, but `requires_approval: true` already covers every tool of the Skill",
                "covered by requires_approval",
            )
            .with_help("keep `requires_approval: true` for every tool, or `approval: [TOOL, …]` for some of them"),
        );
    }
    let mut all: Vec<String> = tools.to_vec();
    for t in must_call.iter().chain(listed.iter().flatten()) {
        if !all.contains(t) {
            all.push(t.clone());
        }
    }
    if all.is_empty() {
        diags.push(
            doc.warning(
                "approval_without_tools",
                "/requires_approval",
                Anchor::Value,
                "`requires_approval: true`, but the contract names no tool: no call can be declined",
                "no tool to approve",
            )
            .with_help("name the Skill's tools in `preconditions.tools` or `must_call_tools`, or list them in `approval`"),
        );
    }
    all
}

/// Tool names in `approval` and `actions`: not empty, each once.
fn check_tool_names(doc: &Document, key: &str, names: &[String], diags: &mut Vec<Diagnostic>) {
    for (i, name) in names.iter().enumerate() {
        if name.trim().is_empty() {
            diags.push(
                doc.error(
                    "invalid_name",
                    &join(key, i),
                    Anchor::Value,
                    "an empty tool name",
                    "empty",
                )
                .with_help("write the tool's name as the agent calls it, such as `add_schedule`"),
            );
        } else if names[..i].contains(name) {
            diags.push(
                doc.warning(
                    "duplicate_tool",
                    &join(key, i),
                    Anchor::Value,
                    format!("`{name}` is listed twice"),
                    "listed again",
                )
                .with_help("list each tool once"),
            );
        }
    }
}

fn skill_name(doc: &Document, raw: &RawContract, diags: &mut Vec<Diagnostic>) -> Option<String> {
    match (&raw.skill, &raw.skill_name) {
        (Some(_), Some(_)) => {
            diags.push(
                doc.error(
                    "duplicate_skill_name",
                    "/skill_name",
                    Anchor::Key,
                    "the skill is named twice, by `skill` and by `skill_name`",
                    "second name",
                )
                .with_help("keep one of them: `skill_name` is an alias of `skill`"),
            );
            None
        }
        (None, None) => {
            diags.push(
                Diagnostic::error("missing_key", "missing required key `skill`")
                    .at(&doc.file, doc.span("", Anchor::Value), "in this contract")
                    .with_help("add `skill: NAME` (or `skill_name: NAME`) naming the Skill this contract is for"),
            );
            None
        }
        (Some(name), None) | (None, Some(name)) => {
            let key = if raw.skill.is_some() {
                "/skill"
            } else {
                "/skill_name"
            };
            // Names appear in cell ids (`skill/scenario/Q/fault`), file names and reports.
            let bad = name
                .chars()
                .find(|c| !(c.is_alphanumeric() || "-_.:".contains(*c)));
            if name.is_empty() || bad.is_some() {
                let why = match bad {
                    None => "empty".to_string(),
                    Some(c) if c.is_whitespace() => "contains spaces".to_string(),
                    Some(c) if c.is_control() => format!("contains the control character {:?}", c),
                    Some(c) => format!("contains `{c}`"),
                };
                diags.push(
                    doc.error(
                        "invalid_name",
                        key,
                        Anchor::Value,
                        format!("invalid skill name `{}`", name.escape_debug()),
                        why,
                    )
                    .with_help("skill names appear in cell ids and file names: use letters, digits, `-`, `_`, `.` and `:`, such as `search_docs`"),
                );
                return None;
            }
            Some(name.clone())
        }
    }
}

/// Merges the trace rules from their three possible places, each rule given at most once.
fn trace_rules(doc: &Document, raw: &RawContract, diags: &mut Vec<Diagnostic>) -> TraceRules {
    let top = RawTraceRules {
        must_call_tools: raw.must_call_tools.clone(),
        tool_call_min_frequency: raw.tool_call_min_frequency,
        enforced_url_prefix_whitelist: raw.enforced_url_prefix_whitelist.clone(),
        strict_citation_required: raw.strict_citation_required,
        prohibited_actions: raw.prohibited_actions.clone(),
    };
    let places: [(&str, Option<&RawTraceRules>); 3] = [
        ("", Some(&top)),
        ("/trace", raw.trace.as_ref()),
        ("/contracts", raw.contracts.as_ref()),
    ];
    fn pick<T: Clone>(
        doc: &Document,
        diags: &mut Vec<Diagnostic>,
        places: &[(&str, Option<&RawTraceRules>)],
        key: &str,
        get: impl Fn(&RawTraceRules) -> Option<T>,
    ) -> Option<(T, String)> {
        let mut found: Option<(T, String)> = None;
        for (prefix, rules) in places {
            let Some(value) = rules.and_then(&get) else {
                continue;
            };
            let pointer = join(prefix, key);
            match &found {
                Some((_, first)) => diags.push(
                    doc.error("rule_given_twice", &pointer, Anchor::Key, format!("`{key}` is given twice: at {} and here", place_name(first)), "given again")
                        .with_help("trace rules may sit top-level, under `trace:` or under `contracts:`; keep only one"),
                ),
                None => found = Some((value, pointer)),
            }
        }
        found
    }
    let mut rules = TraceRules::default();
    if let Some((v, _)) = pick(doc, diags, &places, "must_call_tools", |r| {
        r.must_call_tools.clone()
    }) {
        rules.must_call_tools = v;
    }
    if let Some((v, _)) = pick(doc, diags, &places, "tool_call_min_frequency", |r| {
        r.tool_call_min_frequency
    }) {
        rules.tool_call_min_frequency = v;
    }
    if let Some((v, pointer)) = pick(doc, diags, &places, "enforced_url_prefix_whitelist", |r| {
        r.enforced_url_prefix_whitelist.clone()
    }) {
        for (i, entry) in v.iter().enumerate() {
            if let Err(why) = absolute_http_url(entry) {
                diags.push(
                    doc.error(
                        "invalid_url",
                        &join(&pointer, i),
                        Anchor::Value,
                        format!("whitelist entry `{entry}` {why}"),
                        "not an absolute http(s) URL",
                    )
                    .with_help("write an absolute URL prefix such as `https://docs.example.com`"),
                );
            }
        }
        rules.url_whitelist = v;
    }
    if let Some((v, _)) = pick(doc, diags, &places, "strict_citation_required", |r| {
        r.strict_citation_required
    }) {
        rules.strict_citation_required = v;
    }
    if let Some((v, _)) = pick(doc, diags, &places, "prohibited_actions", |r| {
        r.prohibited_actions.clone()
    }) {
        rules.prohibited_actions = v;
    }
    rules
}

fn place_name(pointer: &str) -> String {
    match pointer.rsplit_once('/') {
        Some(("", _)) | None => "the top level".into(),
        Some((parent, _)) => format!("`{}`", parent.trim_start_matches('/')),
    }
}

/// `Ok` for an absolute http(s) URL with a host; `Err` says what is wrong.
pub(crate) fn absolute_http_url(s: &str) -> Result<url::Url, String> {
    match url::Url::parse(s) {
        Ok(u) if !matches!(u.scheme(), "http" | "https") => {
            Err(format!("has scheme `{}`, not http or https", u.scheme()))
        }
        Ok(u) if u.host_str().is_none_or(str::is_empty) => Err("has no host".into()),
        Ok(u) => Ok(u),
        Err(url::ParseError::RelativeUrlWithoutBase) => Err("is not absolute".into()),
        Err(e) => Err(format!("is not a URL ({e})")),
    }
}

/// Loads and checks `io_contract.input_schema`.
fn input_schema(
    doc: &Document,
    schema: RawSchemaRef,
    diags: &mut Vec<Diagnostic>,
) -> Option<Value> {
    const PTR: &str = "/io_contract/input_schema";
    let (value, inline) = match schema {
        RawSchemaRef::Inline(map) => (Value::Object(map), true),
        RawSchemaRef::Path(rel) => {
            let path = doc.file.dir().join(&rel);
            let loaded = load_schema_file(&path).map_err(|why| {
                diags.push(
                    doc.error("input_schema", PTR, Anchor::Value, format!("cannot load input schema `{rel}`: {why}"), "cannot load this file")
                        .with_help("give a path relative to the contract file, to a JSON or YAML file holding a JSON Schema"),
                )
            });
            (loaded.ok()?, false)
        }
    };
    if let Err(problem) = crate::schema::check_json_schema(&value) {
        let pointer = if inline {
            format!("{PTR}{}", problem.pointer)
        } else {
            PTR.to_string()
        };
        diags.push(
            doc.error(
                "input_schema",
                &pointer,
                Anchor::Value,
                format!("invalid `input_schema`: {}", problem.message),
                "invalid JSON Schema",
            )
            .with_help(problem.help),
        );
        return None;
    }
    Some(value)
}

fn load_schema_file(path: &Path) -> Result<Value, String> {
    let file = SourceFile::read(path).map_err(|d| {
        d.message
            .rsplit_once(": ")
            .map_or(d.message.clone(), |(_, why)| why.to_string())
    })?;
    Document::parse(file)
        .map(|(doc, _)| doc.value)
        .map_err(|d| d.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitelist_entries_must_be_absolute_http_urls() {
        assert!(absolute_http_url("https://docs.example.com").is_ok());
        assert!(absolute_http_url("http://127.0.0.1:8080/x").is_ok());
        assert_eq!(
            absolute_http_url("docs.example.com").unwrap_err(),
            "is not absolute"
        );
        assert_eq!(
            absolute_http_url("ftp://files.example.com").unwrap_err(),
            "has scheme `ftp`, not http or https"
        );
    }
}
