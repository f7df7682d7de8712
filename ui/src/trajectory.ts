// Reading stored trajectories: each step's context is `keep` messages of the previous step's
// context followed by `add`. Contexts are rebuilt on demand, only up to the step asked for, so a
// long trajectory opens without rebuilding every context.

import type { Message, StoredStep, ToolSpec } from "./types";

export class Contexts {
  private messages: Message[][] = [];
  private tools: ToolSpec[][] = [];
  constructor(private readonly steps: StoredStep[]) {}

  private build(upTo: number) {
    for (let j = this.messages.length; j <= upTo && j < this.steps.length; j++) {
      const s = this.steps[j] as StoredStep & { context?: { messages: Message[]; tools: ToolSpec[] } };
      if (s.context) {
        // A step written with its whole context.
        this.messages.push(s.context.messages);
        this.tools.push(s.context.tools);
        continue;
      }
      const prev = j > 0 ? this.messages[j - 1] : [];
      if (s.keep > prev.length) throw new Error(`step ${s.index}: keeps ${s.keep} messages but the previous step has ${prev.length}`);
      this.messages.push(prev.slice(0, s.keep).concat(s.add ?? []));
      this.tools.push(s.tools ?? (j > 0 ? this.tools[j - 1] : []));
    }
  }

  /** The full context of step `i`. */
  messagesAt(i: number): Message[] {
    this.build(i);
    return this.messages[i];
  }

  toolsAt(i: number): ToolSpec[] {
    this.build(i);
    return this.tools[i];
  }

  /** How many messages of step `i`'s context are new (not carried over from step i − 1). */
  addedAt(i: number): number {
    const s = this.steps[i] as StoredStep & { context?: unknown };
    if (s.context) return this.messagesAt(i).length;
    return s.add?.length ?? 0;
  }
}

export function originLabel(m: Message): string {
  const o = m.origin;
  if (!o) return "";
  return o.by === "hook" ? `${o.kind}: ${o.hook}` : o.by;
}

export function fromHook(m: Message): boolean {
  return m.origin?.by === "hook";
}

export function callText(c: { name: string; arguments: unknown }): string {
  const a = c.arguments;
  if (a && typeof a === "object" && !Array.isArray(a)) {
    const entries = Object.entries(a as Record<string, unknown>);
    if (entries.length === 1 && typeof entries[0][1] === "string") return `${c.name}(${entries[0][0]}: ${entries[0][1]})`;
  }
  return `${c.name}(${JSON.stringify(a)})`;
}

/** What a step did in the environment, as text: each call as executed (a blocked call as
 * `blocked …`), or the reply when the step made no call. Two steps with the same text took the
 * same action. */
export function stepAction(s: StoredStep): string {
  if (s.calls.length > 0) return s.calls.map((c) => (c.executed ? callText(c.executed) : `blocked ${callText(c.proposed)}`)).join("; ");
  if (s.output.tool_calls.length > 0) return s.output.tool_calls.map(callText).join("; ");
  return `reply: ${s.output.content.trim()}`;
}

/** The first step index at which two trajectories' actions differ (a step one has and the other
 * lacks counts as different), or −1 when they take the same actions throughout. */
export function firstDivergence(a: StoredStep[], b: StoredStep[]): number {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (i >= a.length || i >= b.length || stepAction(a[i]) !== stepAction(b[i])) return i;
  }
  return -1;
}
