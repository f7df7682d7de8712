// The JSON shapes of the workbench command set (docs/api.md), as the UI reads them. Every
// command's response type is generated from the workbench (`./api.gen.ts`); what is declared here
// are the nested shapes those responses carry as they are stored (episodes, routing decisions,
// the experiment file) and the event stream.
export type * from "./api.gen";
import type { EpisodeCount, Unit } from "./api.gen";

/** The experiment file as JSON (src/experiment/config.rs); unknown keys are kept as they are. */
export interface ExperimentConfig {
  name: string;
  suites: string[];
  heldout_families: string[];
  datasets?: Record<string, string>;
  arms: string[];
  seeds: number[];
  iterations: number;
  eval_every: number;
  reanchor_every: number;
  policy: {
    backend: string;
    temperature?: number;
    learning_rate?: number;
    warm_start_demos?: number;
    base_url?: string;
    model?: string;
    api_key_env?: string;
    [k: string]: unknown;
  };
  budget: {
    batch_tasks: number;
    base_tries: number;
    rescue_siblings: number;
    rescue_tries: number;
    probe_tasks: number;
  };
  eval?: { train_tasks?: number; heldout_tasks?: number; temperature?: number; rank_one?: boolean; [k: string]: unknown };
  /** The external trainer of an `openai` policy (docs/trainer-protocol.md). */
  trainer?: { kind?: string; command: string[]; timeout_s?: number; base_model?: string; objective?: string; workdir?: string; params?: Record<string, unknown> };
  serving?: { kind?: string; command?: string[]; ready_timeout_s?: number };
  [k: string]: unknown;
}

export interface ToolCall {
  id: string;
  name: string;
  arguments: unknown;
}

export type Origin = { by: "frame" | "policy" | "environment" } | { by: "hook"; hook: string; kind: string };

export interface Message {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  origin?: Origin;
}

export interface ToolSpec {
  name: string;
  description: string;
  parameters: unknown;
}

export interface AssistantTurn {
  content: string;
  tool_calls: ToolCall[];
  raw?: string;
  prompt_tokens?: number;
  completion_tokens?: number;
}

export interface Intervention {
  hook: string;
  kind: string;
  when: string[];
  effect: "inject" | "block" | "rewrite" | "call";
  text?: string;
  message?: string;
  from?: ToolCall;
  to?: ToolCall;
  call_kind?: string;
  prompt?: string;
  output?: string;
}

export interface CallRecord {
  proposed: ToolCall;
  executed: ToolCall | null;
  observation: string;
  signals: Record<string, unknown>;
  duration_ms: number;
}

/** A step as stored: its context is `keep` messages of the previous step's context, then `add`. */
export interface StoredStep {
  index: number;
  keep: number;
  add: Message[];
  tools?: ToolSpec[];
  output: AssistantTurn;
  calls: CallRecord[];
  interventions: Intervention[];
  policy_ms: number;
  env_ms: number;
}

export interface StoredEpisode {
  schema: number;
  task_id: string;
  suite: string;
  family: string;
  harness: string;
  policy: string;
  sample: number;
  seed: number;
  status: string;
  steps: StoredStep[];
  score: { reward: number; success: boolean; details: unknown } | null;
  infra_error: string | null;
  duration_ms: number;
  prompt_tokens: number;
  completion_tokens: number;
}

export interface TrainExample {
  context: { messages: Message[]; tools: ToolSpec[] };
  target: AssistantTurn;
  weight: number;
  /** Built-in policy only: can its grammar produce the target from this context? (false:
   * training skips the example) */
  producible?: boolean;
}

/** One stored routing decision: the failure, each voter's ranking, the Borda order, the choice. */
export interface RouteDecision {
  query: { task_id: string; family: string; signature: string; summary: string };
  anchor: number;
  policy_version: number;
  rankings: [string, string[]][];
  aggregate: string[];
  chosen: string[];
  rescued: [string, boolean][];
  abstained?: [string, string][];
}

export type WorkbenchEvent =
  | { event: "run_started"; run_id: number; total: number; label: string }
  | { event: "progress"; run_id: number; label: string; done: number; total: number; success_rate: number | null; eta_s: number | null; unit?: Unit }
  | {
      /** What one (suite, arm, seed) job is doing now, with the run's episodes (docs/api.md). */
      event: "phase";
      run_id: number;
      suite: string;
      arm: string;
      seed: number;
      phase: "demonstrations" | "probing" | "rollouts" | "rescues" | "update" | "evaluation" | "rank_one" | "finished";
      iteration: number;
      iterations: number;
      label: string;
      step: number;
      steps: number;
      episodes: EpisodeCount;
      eta_s: number | null;
    }
  | { event: "evaluation"; run_id: number; suite: string; arm: string; seed: number; iteration: number; split: string; success: number; tasks: number }
  | { event: "message"; run_id: number; text: string }
  | { event: "run_finished"; run_id: number; status: "finished" | "cancelled" | "failed" };
