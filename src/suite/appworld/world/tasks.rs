//! The bundled world's tasks: scenarios of three variants over nine families, each with its
//! instruction, its reference solution (Python), and its state-based grading.
//!
//! A scenario is one generated world (people, notes, songs, money, to-dos) and one task
//! template; its three variants ask for the same kind of thing about different targets. A task
//! is graded by comparing the final data of every app with the data the task requires:
//! the targeted app must hold exactly the required change, every other app must be unchanged,
//! the task must be completed, and a question's answer must match.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{json, Value};

use super::apps::{Contact, Data, Note, Person, Playlist, Song, TodoItem, Transaction, World, DATA_APPS, NOW};

/// Families in the order their scenarios are numbered.
pub const FAMILIES: &[&str] = &[
    "notes_lookup",
    "notes_create",
    "contacts_phone",
    "contacts_update",
    "wallet_pay",
    "wallet_total",
    "music_playlist",
    "music_count",
    "todo_complete",
];
/// Scenarios per family in the bundled task set.
pub const SCENARIOS_PER_FAMILY: usize = 6;
/// Scenarios per family the generator makes in all: the bundled ones first, then more that a
/// dataset file can name by task id (a larger held-out split, for one).
pub const GENERATED_SCENARIOS_PER_FAMILY: usize = 64;
/// Variants per scenario.
pub const VARIANTS: usize = 3;

/// One bundled task.
#[derive(Clone, Debug, PartialEq)]
pub struct WorldTask {
    /// `<scenario>_<variant>`.
    pub task_id: String,
    pub scenario: String,
    pub family: &'static str,
    pub instruction: String,
    seed: u64,
    variant: usize,
}

/// What a task requires: the data after it is done, the answer (for a question), and its
/// reference solution.
#[derive(Clone)]
pub struct Requirement {
    pub expected: Data,
    /// The apps whose data the task changes.
    pub changes: Vec<&'static str>,
    pub answer: Option<Value>,
    pub reference: String,
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &'a [&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
    /// `k` distinct indices below `n`.
    fn distinct(&mut self, n: usize, k: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..n).collect();
        for i in 0..n {
            let j = i + self.below(n - i);
            v.swap(i, j);
        }
        v.truncate(k);
        v
    }
}

const FIRST: &[&str] = &[
    "Ava", "Liam", "Maya", "Noah", "Zoe", "Omar", "Lena", "Ivan", "Sara", "Theo", "Nina", "Ravi", "Elsa", "Hugo", "Mila", "Jonas", "Aria", "Felix",
    "Yuki", "Diego",
];
const LAST: &[&str] = &[
    "Garcia", "Chen", "Novak", "Okafor", "Silva", "Moreau", "Kowalski", "Haddad", "Ivanova", "Larsen", "Tanaka", "Romero", "Weber", "Singh",
    "Murphy", "Rossi",
];
const RELATIONS: &[&str] = &["friend", "sibling", "coworker", "parent", "neighbor", "partner"];
const NOTE_TOPICS: &[&str] = &[
    "Packing list",
    "Book ideas",
    "Gift ideas",
    "Recipe",
    "Meeting notes",
    "Garden plan",
    "Workout plan",
    "Travel plan",
    "Movie list",
    "Budget",
    "Reading list",
    "Car service",
    "Birthday plan",
    "Weekend chores",
    "Podcast notes",
    "Study plan",
];
const NOTE_WORDS: &[&str] = &["bring", "call", "buy", "check", "remember", "plan", "book", "pack", "read", "fix", "water", "email", "visit", "cook"];
const NOTE_OBJECTS: &[&str] = &[
    "the tickets",
    "two towels",
    "the charger",
    "fresh basil",
    "the report",
    "the tomatoes",
    "a new lamp",
    "the passport",
    "the receipts",
    "the map",
    "some stamps",
    "the keys",
];
const ARTISTS: &[&str] = &["The Lanterns", "Mira Vale", "Northbound", "Echo Park", "Sol Rivera", "Glass Harbor", "Juno Reyes", "Static Bloom"];
const GENRES: &[&str] = &["pop", "rock", "jazz", "indie", "folk", "electronic"];
const SONG_A: &[&str] = &["Golden", "Silent", "Electric", "Paper", "Midnight", "Velvet", "Broken", "Wild", "Neon", "Distant", "Hollow", "Bright"];
const SONG_B: &[&str] = &["Hearts", "River", "Skyline", "Echoes", "Summer", "Roads", "Letters", "Fire", "Tides", "Lights", "Dreams", "Avenue"];
const TODO_VERBS: &[&str] = &["Renew", "Return", "Pay", "Schedule", "Clean", "Order", "Cancel", "Book", "Repair", "Submit"];
const TODO_OBJECTS: &[&str] = &[
    "library books",
    "the gym membership",
    "the phone bill",
    "a dentist visit",
    "the garage",
    "printer ink",
    "the old subscription",
    "a haircut",
    "the bike",
    "the tax form",
    "the insurance",
    "concert tickets",
];
const PLAYLIST_NAMES: &[&str] = &["Road Trip", "Morning Run", "Focus", "Rainy Day", "Dinner Party", "Late Night", "Sunday Chill", "Throwbacks"];
const DESCRIPTIONS: &[&str] = &["dinner", "concert tickets", "rent share", "groceries", "birthday gift", "taxi", "book club", "coffee"];

fn email_of(first: &str, last: &str) -> String {
    format!("{}.{}@example.com", first.to_lowercase(), last.to_lowercase())
}

fn phone(r: &mut Rng) -> String {
    format!("555-{:03}-{:04}", 100 + r.below(900), r.below(10000))
}

fn date(day_offset: i64) -> String {
    // days relative to 2023-05-18, within April to June 2023
    let (mut m, mut d) = (5i64, 18 + day_offset);
    while d < 1 {
        m -= 1;
        d += if m == 4 { 30 } else { 31 };
    }
    while d > if m == 5 { 31 } else { 30 } {
        d -= if m == 5 { 31 } else { 30 };
        m += 1;
    }
    format!("2023-{m:02}-{d:02}")
}

/// The world of one scenario.
pub fn scenario_data(seed: u64) -> Data {
    let mut r = Rng(seed);
    let names = r.distinct(FIRST.len() * LAST.len(), 15);
    let person = |i: usize| (FIRST[names[i] % FIRST.len()], LAST[names[i] / FIRST.len()]);
    let (sf, sl) = person(0);
    let supervisor = Person { first_name: sf.into(), last_name: sl.into(), email: email_of(sf, sl), phone_number: phone(&mut r) };
    let mut passwords = std::collections::BTreeMap::new();
    for app in ["notes", "contacts", "wallet", "music", "todo"] {
        passwords.insert(app.to_string(), format!("{}{}!{}", &app[..2], r.below(9000) + 1000, r.pick(&["Kx", "Qz", "Vm", "Tb"])));
    }
    let contacts: Vec<Contact> = (1..15)
        .map(|i| {
            let (f, l) = person(i);
            Contact {
                contact_id: i as u32,
                first_name: f.into(),
                last_name: l.into(),
                email: email_of(f, l),
                phone_number: phone(&mut r),
                relationship: r.pick(RELATIONS).into(),
            }
        })
        .collect();
    let topics = r.distinct(NOTE_TOPICS.len(), 12);
    let notes: Vec<Note> = topics
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let content = format!("{} {}, then {} {}.", r.pick(NOTE_WORDS), r.pick(NOTE_OBJECTS), r.pick(NOTE_WORDS), r.pick(NOTE_OBJECTS));
            let content = content[..1].to_uppercase() + &content[1..];
            Note {
                note_id: i as u32 + 1,
                title: NOTE_TOPICS[*t].into(),
                content,
                tags: vec![r.pick(&["home", "work", "personal"]).into()],
                created_at: format!("{}T09:{:02}:00", date(-(30 - i as i64)), r.below(60)),
            }
        })
        .collect();
    let mut transactions = Vec::new();
    for i in 0..16u32 {
        let c = &contacts[r.below(6)];
        let received = r.below(3) > 0;
        let cents = (r.below(180) as i64 + 5) * 100 + [0, 25, 50, 75][r.below(4)];
        let (from, to) = if received { (c.email.clone(), supervisor.email.clone()) } else { (supervisor.email.clone(), c.email.clone()) };
        transactions.push(Transaction {
            transaction_id: i + 1,
            sender_email: from,
            receiver_email: to,
            amount_cents: cents,
            description: r.pick(DESCRIPTIONS).into(),
            created_at: format!("{}T18:00:00", date(-(40 - 2 * i as i64))),
        });
    }
    let artists = r.distinct(ARTISTS.len(), 5);
    let titles = r.distinct(SONG_A.len() * SONG_B.len(), 26);
    let songs: Vec<Song> = titles
        .iter()
        .enumerate()
        .map(|(i, t)| Song {
            song_id: i as u32 + 1,
            title: format!("{} {}", SONG_A[t % SONG_A.len()], SONG_B[t / SONG_A.len()]),
            // the first artist gets the most songs, so pages matter
            artist: ARTISTS[artists[if i % 3 == 0 { 0 } else { (i / 3) % artists.len() }]].into(),
            genre: r.pick(GENRES).into(),
            duration_seconds: 150 + r.below(150) as u32,
        })
        .collect();
    let pl_names = r.distinct(PLAYLIST_NAMES.len(), 4);
    let playlists: Vec<Playlist> = pl_names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let k = 3 + r.below(6);
            let mut ids: Vec<u32> = r.distinct(songs.len(), k).into_iter().map(|x| x as u32 + 1).collect();
            ids.sort_unstable();
            Playlist { playlist_id: i as u32 + 1, title: PLAYLIST_NAMES[*n].into(), song_ids: ids }
        })
        .collect();
    let objs = r.distinct(TODO_OBJECTS.len(), 12);
    let todo: Vec<TodoItem> = objs
        .iter()
        .enumerate()
        .map(|(i, o)| TodoItem {
            item_id: i as u32 + 1,
            title: format!("{} {}", r.pick(TODO_VERBS), TODO_OBJECTS[*o]),
            due_date: date(r.below(40) as i64 - 20),
            completed: r.below(4) == 0,
        })
        .collect();
    Data { supervisor, passwords, notes, contacts, balance_cents: 250_000 + r.below(100_000) as i64, transactions, songs, playlists, todo }
}

/// Values made once per key and then shared (the world's data and requirements are pure
/// functions of a scenario, and every episode needs them).
struct Memo<K, V>(OnceLock<Mutex<HashMap<K, Arc<V>>>>);

impl<K: Eq + std::hash::Hash + Clone, V> Memo<K, V> {
    const fn new() -> Self {
        Memo(OnceLock::new())
    }

    fn get_or_make(&self, key: &K, make: impl FnOnce() -> V) -> Arc<V> {
        let map = self.0.get_or_init(Default::default);
        if let Some(v) = map.lock().unwrap_or_else(|p| p.into_inner()).get(key) {
            return v.clone();
        }
        // made outside the lock (making a requirement reads the data, which takes it too)
        let v = Arc::new(make());
        map.lock().unwrap_or_else(|p| p.into_inner()).entry(key.clone()).or_insert(v).clone()
    }
}

fn scenario_id(family: &str, k: usize) -> String {
    format!("{:07x}", crate::seed::hash_str(&format!("{family}/{k}")) & 0xfff_ffff)
}

/// Every bundled task, scenario by scenario.
pub fn all_tasks() -> Vec<WorldTask> {
    bundled_tasks().to_vec()
}

/// The bundled tasks, made once: an episode looks its task up by id, and making every task runs
/// its reference requirement.
fn bundled_tasks() -> &'static [WorldTask] {
    static TASKS: OnceLock<Vec<WorldTask>> = OnceLock::new();
    TASKS.get_or_init(make_tasks)
}

fn make_tasks() -> Vec<WorldTask> {
    FAMILIES.iter().flat_map(|family| (0..SCENARIOS_PER_FAMILY).flat_map(move |k| scenario_tasks(family, k))).collect()
}

/// The variants of scenario `k` of `family` (`k` below [`GENERATED_SCENARIOS_PER_FAMILY`]; the
/// first [`SCENARIOS_PER_FAMILY`] are bundled).
pub fn scenario_tasks(family: &'static str, k: usize) -> Vec<WorldTask> {
    let scenario = scenario_id(family, k);
    let seed = crate::seed::hash_str(&scenario);
    (0..VARIANTS)
        .map(|variant| {
            let mut t = WorldTask {
                task_id: format!("{scenario}_{}", variant + 1),
                scenario: scenario.clone(),
                family,
                instruction: String::new(),
                seed,
                variant,
            };
            t.instruction = t.requirement().0;
            t
        })
        .collect()
}

/// A task of the world by id: a bundled one, or one of a generated scenario.
pub fn find(task_id: &str) -> Option<WorldTask> {
    if let Some(t) = bundled_tasks().iter().find(|t| t.task_id == task_id) {
        return Some(t.clone());
    }
    let (scenario, variant) = task_id.rsplit_once('_')?;
    let variant: usize = variant.parse().ok()?;
    let &(family, k) = generated_scenarios().get(scenario)?;
    static MADE: Memo<(&'static str, usize), Vec<WorldTask>> = Memo::new();
    MADE.get_or_make(&(family, k), || scenario_tasks(family, k)).get(variant.checked_sub(1)?).cloned()
}

/// Scenario id -> (family, k) for every scenario the generator makes.
fn generated_scenarios() -> &'static HashMap<String, (&'static str, usize)> {
    static INDEX: OnceLock<HashMap<String, (&'static str, usize)>> = OnceLock::new();
    INDEX.get_or_init(|| FAMILIES.iter().flat_map(|f| (0..GENERATED_SCENARIOS_PER_FAMILY).map(move |k| (scenario_id(f, k), (*f, k)))).collect())
}

/// Login preamble shared by the reference solutions.
fn login(app: &str) -> String {
    format!(
        "profile = apis.supervisor.show_profile()\n\
         passwords = {{a['account_name']: a['password'] for a in apis.supervisor.show_account_passwords()}}\n\
         token = apis.{app}.login(username=profile['email'], password=passwords['{app}'])['access_token']\n"
    )
}

/// A loop collecting every page of `call` (which must end in `page_index=`).
fn all_pages(var: &str, call: &str) -> String {
    format!("{var} = []\npage = 0\nwhile True:\n    batch = {call}page, page_limit=20)\n    if not batch:\n        break\n    {var} += batch\n    page += 1\n")
}

fn py(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

fn name(c: &Contact) -> String {
    format!("{} {}", c.first_name, c.last_name)
}

/// Search the contacts for `c` by name and keep the exact match (a search also matches parts
/// of other names).
fn find_contact(c: &Contact) -> String {
    format!(
        "found = [c for c in apis.contacts.search_contacts(access_token=token, query={}, page_limit=20) if c['first_name'] == {} and c['last_name'] == {}]\n",
        py(&name(c)),
        py(&c.first_name),
        py(&c.last_name)
    )
}

impl WorldTask {
    /// The scenario's data before the task (generated once per scenario, then copied).
    pub fn data(&self) -> Data {
        static MADE: Memo<u64, Data> = Memo::new();
        (*MADE.get_or_make(&self.seed, || scenario_data(self.seed))).clone()
    }

    pub fn supervisor(&self) -> Person {
        self.data().supervisor
    }

    /// The instruction and what it requires (worked out once per task, then copied: grading
    /// every episode needs it).
    pub fn requirement(&self) -> (String, Requirement) {
        static MADE: Memo<String, (String, Requirement)> = Memo::new();
        (*MADE.get_or_make(&self.task_id, || self.make_requirement())).clone()
    }

    fn make_requirement(&self) -> (String, Requirement) {
        let d = self.data();
        let mut r = Rng(self.seed ^ 0x7a5c);
        let v = self.variant;
        let mut expected = d.clone();
        let world = |e: &mut Data, app: &str, api: &str, args: Value| {
            let mut w = World::new(e.clone());
            let tok = w.call(app, "login", json!({"username": e.supervisor.email, "password": e.passwords[app]}).as_object().unwrap()).ok();
            let mut a = args.as_object().cloned().unwrap_or_default();
            if let Some(t) = tok.as_ref().and_then(|t| t["access_token"].as_str()) {
                a.insert("access_token".into(), json!(t));
            }
            let out = w.call(app, api, &a).unwrap_or(Value::Null);
            *e = w.data;
            out
        };
        let (instruction, changes, answer, body): (String, Vec<&'static str>, Option<Value>, String) = match self.family {
            "notes_lookup" => {
                let n = &d.notes[[2, 7, 11][v] % d.notes.len()];
                (
                    format!("What does my note titled '{}' in my notes app say? Answer with the note's content exactly.", n.title),
                    vec![],
                    Some(json!(n.content)),
                    format!("{}{}found = [n for n in notes if n['title'] == {}][0]\nnote = apis.notes.show_note(access_token=token, note_id=found['note_id'])\napis.supervisor.complete_task(answer=note['content'])\n", login("notes"), all_pages("notes", "apis.notes.show_notes(access_token=token, page_index="), py(&n.title)),
                )
            }
            "notes_create" => {
                let title = format!("{} {}", ["Call", "Visit", "Plan"][v], d.contacts[v + 1].first_name);
                let content = format!("{} {} before {}.", r.pick(NOTE_WORDS), r.pick(NOTE_OBJECTS), date(3 + v as i64));
                world(&mut expected, "notes", "create_note", json!({"title": title, "content": content}));
                (
                    format!("Create a note in my notes app titled '{title}' with the content '{content}'."),
                    vec!["notes"],
                    None,
                    format!(
                        "{}apis.notes.create_note(access_token=token, title={}, content={})\napis.supervisor.complete_task()\n",
                        login("notes"),
                        py(&title),
                        py(&content)
                    ),
                )
            }
            "contacts_phone" => {
                let c = &d.contacts[[1, 5, 9][v]];
                (
                    format!("What is the phone number of my {} {} in my contacts? Answer with the number only.", c.relationship, name(c)),
                    vec![],
                    Some(json!(c.phone_number)),
                    format!("{}{}apis.supervisor.complete_task(answer=found[0]['phone_number'])\n", login("contacts"), find_contact(c)),
                )
            }
            "contacts_update" => {
                let c = &d.contacts[[2, 6, 10][v]];
                let new_email = format!("{}.{}@mailbox.org", c.first_name.to_lowercase(), ["home", "new", "mail"][v]);
                world(&mut expected, "contacts", "update_contact", json!({"contact_id": c.contact_id, "email": new_email}));
                (
                    format!("My {} {} has a new email address, {new_email}. Update it in my contacts.", c.relationship, name(c)),
                    vec!["contacts"],
                    None,
                    format!("{}{}apis.contacts.update_contact(access_token=token, contact_id=found[0]['contact_id'], email={})\napis.supervisor.complete_task()\n", login("contacts"), find_contact(c), py(&new_email)),
                )
            }
            "wallet_pay" => {
                let c = &d.contacts[[3, 7, 12][v]];
                let amount = [12.5, 40.0, 27.25][v] + self.seed as f64 % 7.0;
                let desc = DESCRIPTIONS[(self.seed as usize + v) % DESCRIPTIONS.len()];
                world(&mut expected, "wallet", "send_money", json!({"receiver_email": c.email, "amount": amount, "description": desc}));
                (
                    format!("Send ${amount:.2} to my {} {} with my wallet app, with the description '{desc}'. Their email is in my contacts.", c.relationship, name(c)),
                    vec!["wallet"],
                    None,
                    format!(
                        "{}{}email = found[0]['email']\n{}apis.wallet.send_money(access_token=token, receiver_email=email, amount={amount}, description={})\napis.supervisor.complete_task()\n",
                        login("contacts"),
                        find_contact(c),
                        login("wallet").lines().nth(2).map(|l| format!("{l}\n")).unwrap_or_default(),
                        py(desc)
                    ),
                )
            }
            "wallet_total" => {
                let c = &d.contacts[v * 2 % 6];
                let total: i64 = d
                    .transactions
                    .iter()
                    .filter(|t| t.sender_email == c.email && t.receiver_email == d.supervisor.email)
                    .map(|t| t.amount_cents)
                    .sum();
                (
                    format!(
                        "How much money in total have I received from {} ({}) in my wallet app? Answer in dollars as a number.",
                        name(c),
                        c.email
                    ),
                    vec![],
                    Some(json!(total as f64 / 100.0)),
                    format!(
                        "{}{}apis.supervisor.complete_task(answer=round(sum(t['amount'] for t in items if t['sender_email'] == {}), 2))\n",
                        login("wallet"),
                        all_pages("items", "apis.wallet.show_transactions(access_token=token, direction='received', page_index="),
                        py(&c.email)
                    ),
                )
            }
            "music_playlist" => {
                let artist = d.songs[v * 4 % d.songs.len()].artist.clone();
                let title = format!("{} {}", ["Best of", "All of", "Only"][v], artist);
                world(&mut expected, "music", "create_playlist", json!({"title": title}));
                let pid = expected.playlists.last().map(|p| p.playlist_id).unwrap_or(0);
                for s in d.songs.iter().filter(|s| s.artist == artist) {
                    world(&mut expected, "music", "add_song_to_playlist", json!({"playlist_id": pid, "song_id": s.song_id}));
                }
                (
                    format!("Create a playlist titled '{title}' in my music app with every song by {artist} in the catalogue, and nothing else."),
                    vec!["music"],
                    None,
                    format!(
                        "{}{}pid = apis.music.create_playlist(access_token=token, title={})['playlist_id']\nfor s in songs:\n    if s['artist'] == {}:\n        apis.music.add_song_to_playlist(access_token=token, playlist_id=pid, song_id=s['song_id'])\napis.supervisor.complete_task()\n",
                        login("music"),
                        all_pages("songs", &format!("apis.music.search_songs(query={}, page_index=", py(&artist))),
                        py(&title),
                        py(&artist)
                    ),
                )
            }
            "music_count" => {
                let pl = &d.playlists[v % d.playlists.len()];
                (
                    format!("How many songs are in my playlist '{}' in my music app?", pl.title),
                    vec![],
                    Some(json!(pl.song_ids.len())),
                    format!(
                        "{}{}pid = [p for p in lists if p['title'] == {}][0]['playlist_id']\napis.supervisor.complete_task(answer=len(apis.music.show_playlist(access_token=token, playlist_id=pid)['songs']))\n",
                        login("music"),
                        all_pages("lists", "apis.music.show_playlists(access_token=token, page_index="),
                        py(&pl.title)
                    ),
                )
            }
            _ => {
                // todo_complete
                let cut = date([-6, 0, 5][v]);
                let due: Vec<u32> = d.todo.iter().filter(|i| !i.completed && i.due_date <= cut).map(|i| i.item_id).collect();
                for i in &due {
                    world(&mut expected, "todo", "complete_item", json!({"item_id": i}));
                }
                (
                    format!("Mark every open item in my to-do app that is due on or before {cut} as completed."),
                    vec!["todo"],
                    None,
                    format!(
                        "{}{}for i in items:\n    if i['due_date'] <= {}:\n        apis.todo.complete_item(access_token=token, item_id=i['item_id'])\napis.supervisor.complete_task()\n",
                        login("todo"),
                        all_pages("items", "apis.todo.show_items(access_token=token, completed=False, page_index="),
                        py(&cut)
                    ),
                )
            }
        };
        (instruction, Requirement { expected, changes, answer, reference: body })
    }
}

/// One graded test.
#[derive(Clone, Debug, PartialEq)]
pub struct TestResult {
    pub requirement: String,
    pub passed: bool,
    pub detail: String,
}

/// Loose answer equality: numbers within 0.01, strings without case or surrounding space.
pub fn answers_match(given: &Value, expected: &Value) -> bool {
    let num = |v: &Value| match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().trim_start_matches('$').replace(',', "").parse::<f64>().ok(),
        _ => None,
    };
    if let (Some(a), Some(b)) = (num(given), num(expected)) {
        if expected.is_number() {
            return (a - b).abs() < 0.01;
        }
    }
    match (given, expected) {
        (Value::String(a), Value::String(b)) => a.trim().to_lowercase() == b.trim().to_lowercase(),
        (a, b) => a == b,
    }
}

/// Grade the world after an episode.
pub fn grade(task: &WorldTask, world: &World) -> Vec<TestResult> {
    let (_, req) = task.requirement();
    let initial = task.data();
    let mut tests = Vec::new();
    let completion = world.completion.as_ref();
    tests.push(TestResult {
        requirement: "the task is marked completed with apis.supervisor.complete_task".into(),
        passed: completion.is_some_and(|c| c.status == "success"),
        detail: match completion {
            None => "complete_task was not called".into(),
            Some(c) => format!("status `{}`", c.status),
        },
    });
    if let Some(expected) = &req.answer {
        let given = completion.map(|c| c.answer.clone()).unwrap_or(Value::Null);
        tests.push(TestResult {
            requirement: format!("the answer is {expected}"),
            passed: answers_match(&given, expected),
            detail: format!("answer given: {given}"),
        });
    }
    for app in &req.changes {
        let ok = world.data.app_state(app) == req.expected.app_state(app);
        tests.push(TestResult {
            requirement: format!("the {app} app holds exactly the change the task asks for"),
            passed: ok,
            detail: if ok { String::new() } else { format!("{app} data differs from what the task requires") },
        });
    }
    let changed: Vec<&str> =
        DATA_APPS.iter().copied().filter(|a| !req.changes.contains(a) && world.data.app_state(a) != initial.app_state(a)).collect();
    tests.push(TestResult {
        requirement: "nothing else changed".into(),
        passed: changed.is_empty(),
        detail: if changed.is_empty() { String::new() } else { format!("unexpected changes in: {}", changed.join(", ")) },
    });
    tests
}

/// The datetime every task is set at.
pub fn datetime() -> &'static str {
    NOW
}
