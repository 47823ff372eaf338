"""The IOA-ORM package schema (our 02-schema chapter, ``docs/spec/schema.md``) as pydantic v2
models.

Public API:

* :class:`AssessmentPackage` and the models it is made of;
* :func:`load_package` (schema check + normalisation, raises :class:`ioa.errors.PackageLoadError`);
* :func:`check_schema` (the same without raising, used by the validator);
* ``ioa.schema.export.build_json_schema`` (the JSON Schema in ``docs/spec/package.schema.json``;
  run ``python -m ioa.schema.export`` to rewrite it).
"""

from ioa.schema.enums import (
    ALWAYS_ALLOWED_COMMANDS,
    QUESTION_LIKE_KINDS,
    RUNTIME_ENTERED_END_TYPES,
    CandidateCommandType,
    ConditionType,
    ContextStrategy,
    EndType,
    EvidenceDimension,
    FollowUpStyle,
    NodeKind,
    OnViolation,
    QuestionSelection,
    RecoveryAction,
    RecoveryEscalation,
    RecoveryScenario,
    RubricLevelName,
    SignalKind,
    StructureLevel,
)
from ioa.schema.evidence import EvidenceTarget, RubricDescriptor, RubricLevel, RubricLevels
from ioa.schema.grounding import Grounding, MaterialKind, PassagePick
from ioa.schema.loader import SchemaCheck, SchemaProblem, check_schema, load_package
from ioa.schema.nodes import Node, Prompt
from ioa.schema.package import (
    AssessmentPackage,
    DifficultyCalibration,
    ExternalDependency,
    GlobalPolicies,
    LearningOutcome,
    PackageMetadata,
    Persona,
    QuestionPool,
)
from ioa.schema.policies import (
    CandidateCommandPolicy,
    CompletionPolicy,
    ContextPolicy,
    FollowUpPolicy,
    ForbiddenCommand,
    RecoveryHandler,
    TimeBudget,
)
from ioa.schema.transitions import (
    AlwaysCondition,
    CandidateCommandCondition,
    EvidenceSatisfiedCondition,
    PolicyEscalationCondition,
    TimeElapsedCondition,
    Transition,
    TransitionCondition,
    TurnCountReachedCondition,
)

__all__ = [
    "ALWAYS_ALLOWED_COMMANDS",
    "QUESTION_LIKE_KINDS",
    "RUNTIME_ENTERED_END_TYPES",
    "AlwaysCondition",
    "AssessmentPackage",
    "CandidateCommandCondition",
    "CandidateCommandPolicy",
    "CandidateCommandType",
    "CompletionPolicy",
    "ConditionType",
    "ContextPolicy",
    "ContextStrategy",
    "DifficultyCalibration",
    "EndType",
    "EvidenceDimension",
    "EvidenceSatisfiedCondition",
    "EvidenceTarget",
    "ExternalDependency",
    "FollowUpPolicy",
    "FollowUpStyle",
    "ForbiddenCommand",
    "GlobalPolicies",
    "Grounding",
    "LearningOutcome",
    "MaterialKind",
    "Node",
    "NodeKind",
    "OnViolation",
    "PackageMetadata",
    "PassagePick",
    "Persona",
    "PolicyEscalationCondition",
    "Prompt",
    "QuestionPool",
    "QuestionSelection",
    "RecoveryAction",
    "RecoveryEscalation",
    "RecoveryHandler",
    "RecoveryScenario",
    "RubricDescriptor",
    "RubricLevel",
    "RubricLevelName",
    "RubricLevels",
    "SchemaCheck",
    "SchemaProblem",
    "SignalKind",
    "StructureLevel",
    "TimeBudget",
    "TimeElapsedCondition",
    "Transition",
    "TransitionCondition",
    "TurnCountReachedCondition",
    "check_schema",
    "load_package",
]
