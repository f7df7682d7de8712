import { Component, render, type ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import "./style.css";
import { banners, dismissBanner, route, runBar, runs, useStore, viewHref, VIEWS, watchRuns } from "./store";
import { Workspace } from "./views/Workspace";
import { Suites } from "./views/Suites";
import { Harnesses } from "./views/Harnesses";
import { Experiments } from "./views/Experiments";
import { Results } from "./views/Results";
import { Inspector } from "./views/Inspector";
import { armsAndStyle, loadArmsAndStyle, Progress } from "./ui";

function typing(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  if (!t) return false;
  const tag = t.tagName;
  return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || t.isContentEditable;
}

/** The view's search or filter box: the first `[data-search]` field on screen (hidden panes,
 * folded sections and disabled fields are passed over). */
function searchBox(): HTMLInputElement | null {
  for (const el of document.querySelectorAll<HTMLInputElement>(".main [data-search]")) {
    if (el.disabled || el.getClientRects().length === 0) continue;
    const style = getComputedStyle(el);
    if (style.visibility === "hidden") continue;
    return el;
  }
  return null;
}

function Banners() {
  const list = useStore(banners);
  if (!list.length) return null;
  return (
    <div class="banners" role="alert">
      {list.map((b) => (
        <div class="banner error" key={b.id}>
          <strong>Error{b.command ? ` (${b.command})` : ""}:</strong> <span class="banner-text">{b.text}</span>
          <button class="link" onClick={() => dismissBanner(b.id)} aria-label="Dismiss" title="Dismiss (Esc)">
            ✕
          </button>
        </div>
      ))}
    </div>
  );
}

function RunningRuns() {
  const all = useStore(runs);
  const active = [...all.values()].filter((r) => r.status === "running");
  if (!active.length) return null;
  return (
    <div class="nav-runs">
      {active.map((r) => {
        const bar = runBar(r);
        return (
          <a key={r.run_id} href={`#/experiments?run=${r.run_id}`} title={r.now ?? r.label}>
            <span>
              {r.name} <small>{bar.total ? `${Math.round((100 * bar.done) / bar.total)}%` : ""}</small>
            </span>
            <Progress done={bar.done} total={bar.total} />
          </a>
        );
      })}
    </div>
  );
}

/** A view that fails to render shows its error instead of leaving the window blank. */
class ViewBoundary extends Component<{ view: string; children: ComponentChildren }, { error: Error | null }> {
  state = { error: null as Error | null };
  componentDidCatch(error: Error) {
    this.setState({ error });
  }
  componentDidUpdate(prev: { view: string }) {
    if (prev.view !== this.props.view && this.state.error) this.setState({ error: null });
  }
  render() {
    if (this.state.error)
      return (
        <div class="view">
          <div class="banner error">
            <strong>This view failed to render:</strong> <span class="banner-text">{this.state.error.message}</span>
            <button onClick={() => this.setState({ error: null })}>Retry</button>
          </div>
        </div>
      );
    return this.props.children;
  }
}

const KEYS: [string, string][] = [
  ["1 – 6", "go to a view"],
  ["/", "search or filter in this view"],
  ["j  k  ↓  ↑", "next / previous task, harness, episode or step"],
  ["g  G  Home  End", "first / last episode or step"],
  ["→  l  Enter", "Trajectories: from the list into the steps"],
  ["←  h  Esc", "Trajectories: back to the list"],
  ["c", "open or close the current step's context"],
  ["r", "a rescue's three columns: base failure, sibling rescue, distilled example"],
  ["Esc", "leave a field, close a message"],
  ["?", "this list"],
];

function KeyHelp({ onClose }: { onClose: () => void }) {
  return (
    <div class="overlay" onClick={onClose} role="dialog" aria-label="keyboard shortcuts">
      <div class="keyhelp" onClick={(e) => e.stopPropagation()}>
        <h2>Keyboard</h2>
        <table class="table compact">
          <tbody>
            {KEYS.map(([k, what]) => (
              <tr key={k}>
                <td>
                  <kbd>{k}</kbd>
                </td>
                <td>{what}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <button onClick={onClose}>Close</button>
      </div>
    </div>
  );
}

function App() {
  const r = useStore(route);
  // the arms and the charts' style (as the reports draw them) come from the server; the app
  // renders again when they arrive
  useStore(armsAndStyle);
  const [help, setHelp] = useState(false);
  useEffect(() => {
    void loadArmsAndStyle();
    watchRuns();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "?" && !typing(e)) {
        setHelp((h) => !h);
        return;
      }
      if (e.key === "Escape") {
        setHelp(false);
        if (typing(e)) (e.target as HTMLElement).blur();
        else if (banners.get().length) dismissBanner(banners.get()[banners.get().length - 1].id);
        return;
      }
      if (typing(e) || e.ctrlKey || e.metaKey || e.altKey) return;
      const v = VIEWS.find((x) => x.key === e.key);
      if (v) {
        e.preventDefault();
        window.location.hash = viewHref(v.view);
        return;
      }
      if (e.key === "/") {
        const s = searchBox();
        if (s) {
          e.preventDefault();
          s.focus();
          s.select();
        }
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
  useEffect(() => {
    document.title = `${VIEWS.find((v) => v.view === r.view)?.label} · Harness-S Workbench`;
  }, [r.view]);
  return (
    <div class="shell">
      <nav class="nav">
        <div class="brand">
          Harness-S <span>Workbench</span>
        </div>
        <ul>
          {VIEWS.map((v) => (
            <li key={v.view}>
              <a href={viewHref(v.view)} class={r.view === v.view ? "active" : ""} data-view={v.view}>
                <span>{v.label}</span>
                <kbd>{v.key}</kbd>
              </a>
            </li>
          ))}
        </ul>
        <RunningRuns />
        <div class="nav-help">
          <div>
            <kbd>1</kbd>–<kbd>6</kbd> views
          </div>
          <div>
            <kbd>/</kbd> search
          </div>
          <div>
            <kbd>j</kbd>
            <kbd>k</kbd> next / previous
          </div>
          <div>
            <kbd>Esc</kbd> leave a field
          </div>
          <div>
            <button class="link keys-link" onClick={() => setHelp(true)}>
              <kbd>?</kbd> all keys
            </button>
          </div>
        </div>
      </nav>
      <main class="main">
        <Banners />
        <ViewBoundary view={r.view}>
        {r.view === "workspace" && <Workspace />}
        {r.view === "suites" && <Suites params={r.params} />}
        {r.view === "harnesses" && <Harnesses params={r.params} />}
        {r.view === "experiments" && <Experiments params={r.params} />}
        {r.view === "results" && <Results params={r.params} />}
        {r.view === "inspector" && <Inspector params={r.params} />}
        </ViewBoundary>
      </main>
      {help && <KeyHelp onClose={() => setHelp(false)} />}
    </div>
  );
}

render(<App />, document.getElementById("app")!);
