//! AppWorld harnesses on the bundled world: the base frame solves a task with its reference
//! solution, and each sibling's hook fires on what it is for. Policies are scripted.

use harness_s::episode::{Effect, EpisodeStatus};
use harness_s::harness::{run_episode, EpisodeRequest, HarnessLibrary, HarnessSpec};
use harness_s::policy::scripted::ScriptedPolicy;
use harness_s::policy::{AssistantTurn, Origin};
use harness_s::suite::appworld::world::tasks;
use harness_s::suite::appworld::AppWorld;
use harness_s::suite::Suite;
use harness_s::task::Task;
use serde_json::json;

fn spec(name: &str) -> HarnessSpec {
    HarnessLibrary::builtin().expect("shipped specs are valid").get("appworld", name).unwrap_or_else(|| panic!("no harness {name}")).spec.clone()
}

fn cell(code: &str) -> AssistantTurn {
    ScriptedPolicy::call("execute_python", json!({ "code": code }))
}

fn task(suite: &AppWorld, family: &str) -> Task {
    suite.bundled_tasks().unwrap().into_iter().find(|t| t.family == family).unwrap()
}

fn run(suite: &AppWorld, spec: &HarnessSpec, t: &Task, turns: Vec<AssistantTurn>) -> harness_s::episode::Episode {
    let policy = ScriptedPolicy::new("script", turns);
    run_episode(&EpisodeRequest { suite, harness: spec, task: t, policy: &policy, sample: 0, seed: 1, temperature: 0.0, cancel: None })
}

const LOGIN_NOTES: &str = "p = {a['account_name']: a['password'] for a in apis.supervisor.show_account_passwords()}\nme = apis.supervisor.show_profile()['email']\nt = apis.notes.login(username=me, password=p['notes'])['access_token']\nprint(apis.notes.show_notes(access_token=t))";

#[test]
fn the_library_has_an_appworld_base_and_siblings() {
    let lib = HarnessLibrary::builtin().unwrap();
    let sibs = lib.siblings("appworld", "base");
    assert!(sibs.len() >= 6, "{}", sibs.len());
}

#[test]
fn base_completes_a_task_with_its_reference_solution() {
    let s = AppWorld::new();
    let t = task(&s, "music_playlist");
    let reference = tasks::find(&t.id).unwrap().requirement().1.reference;
    let ep = run(&s, &spec("base"), &t, vec![cell(&reference)]);
    assert_eq!(ep.status, EpisodeStatus::Completed, "{:?}", ep.infra_error);
    assert!(ep.success(), "{:?}", ep.score);
    assert!(ep.steps[0].context.messages[1].content.contains("Task: Create a playlist titled"));
}

#[test]
fn verify_before_complete_blocks_an_unchecked_completion() {
    let s = AppWorld::new();
    let t = task(&s, "notes_lookup");
    let ep = run(
        &s,
        &spec("verify-before-complete"),
        &t,
        vec![cell("apis.supervisor.complete_task(answer='x')"), cell(LOGIN_NOTES), cell("apis.supervisor.complete_task(answer='x')")],
    );
    let first = &ep.steps[0];
    assert!(matches!(first.interventions[0].effect, Effect::Block { .. }), "{:?}", first.interventions);
    assert!(first.calls[0].executed.is_none());
    assert_eq!(ep.steps.len(), 3);
    assert!(ep.steps[2].calls[0].signals.submitted);
    assert!(!ep.success(), "a wrong answer still fails");
}

#[test]
fn pagination_helper_fires_after_a_full_page() {
    let s = AppWorld::new();
    let t = task(&s, "notes_lookup");
    let ep = run(&s, &spec("pagination-helper"), &t, vec![cell(LOGIN_NOTES)]);
    assert_eq!(ep.steps[0].interventions.len(), 1, "{:?}", ep.steps[0].calls[0].observation);
    assert_eq!(ep.steps[0].interventions[0].hook, "more-pages");
}

#[test]
fn filter_listings_fires_after_an_unfiltered_full_page_and_not_after_a_narrowed_one() {
    let s = AppWorld::new();
    let t = task(&s, "notes_lookup");
    let fired = |code: &str| {
        let ep = run(&s, &spec("filter-listings"), &t, vec![cell(code)]);
        assert!(ep.steps[0].calls[0].signals.error_kind.is_none(), "{:?}", ep.steps[0].calls[0].observation);
        ep.steps[0].interventions.iter().map(|i| i.hook.clone()).collect::<Vec<_>>()
    };
    // a full page of every note: narrow it
    assert_eq!(fired(LOGIN_NOTES), vec!["narrow-listing".to_string()]);
    let paged = LOGIN_NOTES.replace("show_notes(access_token=t)", "show_notes(access_token=t, page_index=0, page_limit=5)");
    assert_eq!(fired(&paged), vec!["narrow-listing".to_string()], "page arguments choose no items");
    // a listing narrowed by a filter (even one matching every note), or output that is not a full page: silent
    let filtered = LOGIN_NOTES.replace("show_notes(access_token=t)", "show_notes(access_token=t, query='')");
    assert!(fired(&filtered).is_empty());
    let short = LOGIN_NOTES.replace("show_notes(access_token=t)", "show_notes(access_token=t, page_limit=3)");
    assert!(fired(&short).is_empty());
    // five items printed from a listing whose API documents no filter (the world's four
    // playlists and one more): nothing to narrow it with
    let playlists = LOGIN_NOTES
        .replace("notes", "music")
        .replace("print(apis.music.show_music(access_token=t))", "print(apis.music.show_playlists(access_token=t) + [{'title': 'x'}])");
    let ep = run(&s, &spec("filter-listings"), &t, vec![cell(&playlists)]);
    assert_eq!(ep.steps[0].calls[0].observation.matches("'title'").count(), 5, "{}", ep.steps[0].calls[0].observation);
    assert!(ep.steps[0].interventions.is_empty(), "{:?}", ep.steps[0].interventions);
}

#[test]
fn api_docs_first_shows_the_apps_and_the_task_apps_apis() {
    let s = AppWorld::new();
    let t = task(&s, "wallet_total");
    let ep = run(&s, &spec("api-docs-first"), &t, vec![cell("print(1)")]);
    let injected = ep.steps[0].context.messages.iter().find(|m| matches!(m.origin, Origin::Hook { .. })).expect("injected docs");
    assert!(injected.content.contains("'name': 'wallet'"), "{}", injected.content);
    assert!(injected.content.contains("wallet: [{") && injected.content.contains("'name': 'show_transactions'"), "{}", injected.content);
}

#[test]
fn login_helper_explains_a_missing_token() {
    let s = AppWorld::new();
    let t = task(&s, "todo_complete");
    let ep = run(&s, &spec("login-helper"), &t, vec![cell("apis.todo.show_items(access_token='x')")]);
    assert_eq!(ep.steps[0].calls[0].signals.error_kind.as_deref(), Some("unauthorized"));
    assert_eq!(ep.steps[0].interventions[0].hook, "explain-login");
}
