//! What a cell's outcome is called: the system's behaviour, the verdict, and the findings
//! of the checks that decided it (docs/report.md, normative names).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Every check that can report a finding: the `check` of a finding in report.json, JUnit
/// and annotations (docs/report.md lists what each one means).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckId {
    /// `agent_protocol`.
    AgentProtocol,
    /// `candidate_parse`.
    CandidateParse,
    /// `citation_forged_url`.
    CitationForgedUrl,
    /// `citation_unsupported`.
    CitationUnsupported,
    /// `empty_answer`.
    EmptyAnswer,
    /// `expected_facts`.
    ExpectedFacts,
    /// `failure_semantics`.
    FailureSemantics,
    /// `fixture_miss`.
    FixtureMiss,
    /// `forbidden_facts`.
    ForbiddenFacts,
    /// `hard_interrupt`.
    HardInterrupt,
    /// `history_parse`.
    HistoryParse,
    /// `malformed_tool_call`.
    MalformedToolCall,
    /// `must_call_tools`.
    MustCallTools,
    /// `output_assertion`.
    OutputAssertion,
    /// `prohibited_action`.
    ProhibitedAction,
    /// `quality_gate`.
    QualityGate,
    /// `refusal_judge_unavailable`.
    RefusalJudgeUnavailable,
    /// `silent_degradation`.
    SilentDegradation,
    /// `target_unavailable`.
    TargetUnavailable,
    /// `timeout`.
    Timeout,
    /// `tool_call_min_frequency`.
    ToolCallMinFrequency,
    /// `trace_mismatch`.
    TraceMismatch,
    /// `unstable_decisions`.
    UnstableDecisions,
    /// `upstream_unavailable`.
    UpstreamUnavailable,
    /// `url_whitelist`.
    UrlWhitelist,
}

impl CheckId {
    /// Every check, in name order.
    pub const ALL: [CheckId; 25] = [
        CheckId::AgentProtocol,
        CheckId::CandidateParse,
        CheckId::CitationForgedUrl,
        CheckId::CitationUnsupported,
        CheckId::EmptyAnswer,
        CheckId::ExpectedFacts,
        CheckId::FailureSemantics,
        CheckId::FixtureMiss,
        CheckId::ForbiddenFacts,
        CheckId::HardInterrupt,
        CheckId::HistoryParse,
        CheckId::MalformedToolCall,
        CheckId::MustCallTools,
        CheckId::OutputAssertion,
        CheckId::ProhibitedAction,
        CheckId::QualityGate,
        CheckId::RefusalJudgeUnavailable,
        CheckId::SilentDegradation,
        CheckId::TargetUnavailable,
        CheckId::Timeout,
        CheckId::ToolCallMinFrequency,
        CheckId::TraceMismatch,
        CheckId::UnstableDecisions,
        CheckId::UpstreamUnavailable,
        CheckId::UrlWhitelist,
    ];

    /// The name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckId::AgentProtocol => "agent_protocol",
            CheckId::CandidateParse => "candidate_parse",
            CheckId::CitationForgedUrl => "citation_forged_url",
            CheckId::CitationUnsupported => "citation_unsupported",
            CheckId::EmptyAnswer => "empty_answer",
            CheckId::ExpectedFacts => "expected_facts",
            CheckId::FailureSemantics => "failure_semantics",
            CheckId::FixtureMiss => "fixture_miss",
            CheckId::ForbiddenFacts => "forbidden_facts",
            CheckId::HardInterrupt => "hard_interrupt",
            CheckId::HistoryParse => "history_parse",
            CheckId::MalformedToolCall => "malformed_tool_call",
            CheckId::MustCallTools => "must_call_tools",
            CheckId::OutputAssertion => "output_assertion",
            CheckId::ProhibitedAction => "prohibited_action",
            CheckId::QualityGate => "quality_gate",
            CheckId::RefusalJudgeUnavailable => "refusal_judge_unavailable",
            CheckId::SilentDegradation => "silent_degradation",
            CheckId::TargetUnavailable => "target_unavailable",
            CheckId::Timeout => "timeout",
            CheckId::ToolCallMinFrequency => "tool_call_min_frequency",
            CheckId::TraceMismatch => "trace_mismatch",
            CheckId::UnstableDecisions => "unstable_decisions",
            CheckId::UpstreamUnavailable => "upstream_unavailable",
            CheckId::UrlWhitelist => "url_whitelist",
        }
    }
}

impl std::fmt::Display for CheckId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the system under test did in one cell (docs/report.md, "Behaviours").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Behavior {
    /// An answer, with no failure signal.
    Answered,
    /// `status: error` with a code.
    ExplicitFailure,
    /// A refusal that gives the reason.
    Refused,
    /// `degraded: true`.
    DegradedMarked,
    /// A crash, or a non-zero exit / 5xx with no usable answer.
    HardInterrupt,
    /// No answer within the timeout.
    Timeout,
    /// A fault was injected and the caller got no failure signal.
    Silent,
    /// Not invoked (the cell could not be evaluated).
    NotRun,
}

/// A cell's verdict (docs/report.md, "Verdicts").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every check passed.
    Pass,
    /// Skipped.
    Skipped,
    /// The quality gate failed.
    QualityFail,
    /// Another check failed.
    ContractViolation,
    /// Silent degradation.
    SilentDegradation,
    /// The cell could not be evaluated (fail closed).
    Error,
}

impl Verdict {
    /// Every verdict, in the order of this enum.
    pub const ALL: [Verdict; 6] = [
        Verdict::Pass,
        Verdict::Skipped,
        Verdict::QualityFail,
        Verdict::ContractViolation,
        Verdict::SilentDegradation,
        Verdict::Error,
    ];

    /// The name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Skipped => "skipped",
            Verdict::QualityFail => "quality_fail",
            Verdict::ContractViolation => "contract_violation",
            Verdict::SilentDegradation => "silent_degradation",
            Verdict::Error => "error",
        }
    }
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingSeverity {
    /// Fails the cell.
    Error,
    /// Reported only.
    Warning,
}

/// One failed or noteworthy check.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Finding {
    /// The check that found it.
    pub check: CheckId,
    /// Error or warning.
    pub severity: FindingSeverity,
    /// What was found.
    pub message: String,
    /// The evidence.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub evidence: Value,
}

impl Finding {
    /// An error finding.
    pub fn error(check: CheckId, message: impl Into<String>) -> Finding {
        Finding {
            check,
            severity: FindingSeverity::Error,
            message: message.into(),
            evidence: Value::Null,
        }
    }

    /// A warning finding.
    pub fn warning(check: CheckId, message: impl Into<String>) -> Finding {
        Finding {
            check,
            severity: FindingSeverity::Warning,
            message: message.into(),
            evidence: Value::Null,
        }
    }

    /// With evidence.
    pub fn with_evidence(mut self, evidence: Value) -> Finding {
        self.evidence = evidence;
        self
    }
}
