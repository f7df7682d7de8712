//! The bundled world's apps: their data, their APIs (one table that drives the documentation,
//! argument checking and dispatch), and the rules each API enforces (login tokens, pagination,
//! errors for bad arguments).
//!
//! Errors are HTTP-style: a status and a JSON message, which the sandbox raises in the agent's
//! Python as `Exception: Response status code is 422:\n{"message": ...}`, as AppWorld does.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// The world's current date and time (every scenario lives on the same day).
pub const NOW: &str = "2023-05-18T12:00:00";

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Person {
    pub first_name: String,
    pub last_name: String,
    pub email: String,
    pub phone_number: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Note {
    pub note_id: u32,
    pub title: String,
    pub content: String,
    pub tags: Vec<String>,
    pub created_at: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Contact {
    pub contact_id: u32,
    pub first_name: String,
    pub last_name: String,
    pub email: String,
    pub phone_number: String,
    pub relationship: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Transaction {
    pub transaction_id: u32,
    pub sender_email: String,
    pub receiver_email: String,
    /// In cents, so sums are exact.
    pub amount_cents: i64,
    pub description: String,
    pub created_at: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Song {
    pub song_id: u32,
    pub title: String,
    pub artist: String,
    pub genre: String,
    pub duration_seconds: u32,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Playlist {
    pub playlist_id: u32,
    pub title: String,
    pub song_ids: Vec<u32>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TodoItem {
    pub item_id: u32,
    pub title: String,
    pub due_date: String,
    pub completed: bool,
}

/// Everything the apps store: the state the graders compare.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Data {
    pub supervisor: Person,
    /// app -> password of the supervisor's account there.
    pub passwords: BTreeMap<String, String>,
    pub notes: Vec<Note>,
    pub contacts: Vec<Contact>,
    pub balance_cents: i64,
    pub transactions: Vec<Transaction>,
    pub songs: Vec<Song>,
    pub playlists: Vec<Playlist>,
    pub todo: Vec<TodoItem>,
}

impl Data {
    /// The part of the data each app owns, normalised for comparison (playlist songs as sets).
    pub fn app_state(&self, app: &str) -> Value {
        match app {
            "notes" => json!(self.notes),
            "contacts" => json!(self.contacts),
            "wallet" => json!({"balance_cents": self.balance_cents, "transactions": self.transactions}),
            "music" => {
                let mut p = self.playlists.clone();
                for pl in &mut p {
                    pl.song_ids.sort_unstable();
                }
                json!({"songs": self.songs, "playlists": p})
            }
            "todo" => json!(self.todo),
            "supervisor" => json!({"profile": self.supervisor, "passwords": self.passwords}),
            _ => Value::Null,
        }
    }
}

/// The apps whose data graders compare (api_docs holds none).
pub const DATA_APPS: &[&str] = &["notes", "contacts", "wallet", "music", "todo", "supervisor"];

/// A failed API call: an HTTP status and a message.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    pub status: u16,
    pub message: String,
}

impl ApiError {
    fn new(status: u16, message: impl Into<String>) -> Self {
        ApiError { status, message: message.into() }
    }
    /// The exception text the agent's code sees.
    pub fn exception_text(&self) -> String {
        format!("Response status code is {}:\n{}", self.status, json!({"message": self.message}))
    }
}

/// A parameter of an API.
pub struct Param {
    pub name: &'static str,
    /// `string`, `integer`, `number`, `boolean`.
    pub ty: &'static str,
    pub required: bool,
    pub default: Option<&'static str>,
    pub description: &'static str,
}

pub struct ApiSpec {
    pub app: &'static str,
    pub name: &'static str,
    pub method: &'static str,
    pub description: &'static str,
    pub params: &'static [Param],
}

const fn p(name: &'static str, ty: &'static str, description: &'static str) -> Param {
    Param { name, ty, required: true, default: None, description }
}
const fn opt(name: &'static str, ty: &'static str, default: &'static str, description: &'static str) -> Param {
    Param { name, ty, required: false, default: Some(default), description }
}

const TOKEN: Param = p("access_token", "string", "Access token obtained from the app's login API.");
const PAGE_INDEX: Param = opt("page_index", "integer", "0", "The index of the page to return (0-based).");
const PAGE_LIMIT: Param = opt("page_limit", "integer", "5", "The maximum number of results per page (1 to 20).");
const USERNAME: Param = p("username", "string", "Your account's username: your email address.");
const PASSWORD: Param = p("password", "string", "Your account's password.");
const LOGIN_DOC: &str = "Log in to your account and get an access token.";

/// App name and one-line description.
pub const APPS: &[(&str, &str)] = &[
    ("api_docs", "Look up the apps, their APIs and the documentation of each API."),
    ("supervisor", "Your supervisor's profile, account passwords, and task completion."),
    ("notes", "A note-taking app: titled notes with tags."),
    ("contacts", "Your phone's contact book."),
    ("wallet", "A money-transfer app: balance, transactions, payments."),
    ("music", "A music app: song catalogue, your playlists."),
    ("todo", "A to-do list app with due dates."),
];

/// Every API of every app.
pub const APIS: &[ApiSpec] = &[
    ApiSpec { app: "api_docs", name: "show_app_descriptions", method: "GET", description: "List the apps and what each is for.", params: &[] },
    ApiSpec {
        app: "api_docs",
        name: "show_api_descriptions",
        method: "GET",
        description: "List the APIs of an app with a short description of each.",
        params: &[p("app_name", "string", "The app's name.")],
    },
    ApiSpec {
        app: "api_docs",
        name: "show_api_doc",
        method: "GET",
        description: "The full documentation of one API: parameters and response.",
        params: &[p("app_name", "string", "The app's name."), p("api_name", "string", "The API's name.")],
    },
    ApiSpec { app: "supervisor", name: "show_profile", method: "GET", description: "Your supervisor's name, email and phone number.", params: &[] },
    ApiSpec {
        app: "supervisor",
        name: "show_account_passwords",
        method: "GET",
        description: "The passwords of your supervisor's app accounts.",
        params: &[],
    },
    ApiSpec {
        app: "supervisor",
        name: "complete_task",
        method: "POST",
        description: "Mark the task as done. Give the answer if the task asks a question.",
        params: &[
            opt("answer", "any", "None", "The answer to the task's question, if it asks one."),
            opt("status", "string", "success", "`success`, or `fail` if the task cannot be done."),
        ],
    },
    ApiSpec { app: "notes", name: "login", method: "POST", description: LOGIN_DOC, params: &[USERNAME, PASSWORD] },
    ApiSpec {
        app: "notes",
        name: "show_notes",
        method: "GET",
        description: "List your notes (id, title, tags), one page at a time.",
        params: &[TOKEN, opt("query", "string", "", "Only notes whose title contains this text."), PAGE_INDEX, PAGE_LIMIT],
    },
    ApiSpec {
        app: "notes",
        name: "show_note",
        method: "GET",
        description: "One note with its content.",
        params: &[TOKEN, p("note_id", "integer", "The note's id.")],
    },
    ApiSpec {
        app: "notes",
        name: "create_note",
        method: "POST",
        description: "Create a note.",
        params: &[TOKEN, p("title", "string", "The title."), p("content", "string", "The content."), opt("tags", "list", "[]", "Tags (strings).")],
    },
    ApiSpec {
        app: "notes",
        name: "update_note",
        method: "PATCH",
        description: "Change a note's title or content.",
        params: &[
            TOKEN,
            p("note_id", "integer", "The note's id."),
            opt("title", "string", "None", "New title."),
            opt("content", "string", "None", "New content."),
        ],
    },
    ApiSpec {
        app: "notes",
        name: "delete_note",
        method: "DELETE",
        description: "Delete a note.",
        params: &[TOKEN, p("note_id", "integer", "The note's id.")],
    },
    ApiSpec { app: "contacts", name: "login", method: "POST", description: LOGIN_DOC, params: &[USERNAME, PASSWORD] },
    ApiSpec {
        app: "contacts",
        name: "search_contacts",
        method: "GET",
        description: "Search your contacts by name, email or relationship, one page at a time.",
        params: &[
            TOKEN,
            opt("query", "string", "", "Text to look for in first name, last name or email."),
            opt("relationship", "string", "None", "Only contacts with this relationship (friend, sibling, coworker, ...)."),
            PAGE_INDEX,
            PAGE_LIMIT,
        ],
    },
    ApiSpec {
        app: "contacts",
        name: "show_contact",
        method: "GET",
        description: "One contact.",
        params: &[TOKEN, p("contact_id", "integer", "The contact's id.")],
    },
    ApiSpec {
        app: "contacts",
        name: "update_contact",
        method: "PATCH",
        description: "Change a contact's email or phone number.",
        params: &[
            TOKEN,
            p("contact_id", "integer", "The contact's id."),
            opt("email", "string", "None", "New email."),
            opt("phone_number", "string", "None", "New phone number."),
        ],
    },
    ApiSpec {
        app: "contacts",
        name: "delete_contact",
        method: "DELETE",
        description: "Delete a contact.",
        params: &[TOKEN, p("contact_id", "integer", "The contact's id.")],
    },
    ApiSpec { app: "wallet", name: "login", method: "POST", description: LOGIN_DOC, params: &[USERNAME, PASSWORD] },
    ApiSpec { app: "wallet", name: "show_balance", method: "GET", description: "Your balance in dollars.", params: &[TOKEN] },
    ApiSpec {
        app: "wallet",
        name: "show_transactions",
        method: "GET",
        description: "Your transactions, newest first, one page at a time.",
        params: &[
            TOKEN,
            opt("direction", "string", "all", "`sent`, `received` or `all`."),
            opt("email", "string", "None", "Only transactions with this person."),
            PAGE_INDEX,
            PAGE_LIMIT,
        ],
    },
    ApiSpec {
        app: "wallet",
        name: "send_money",
        method: "POST",
        description: "Send money to someone by their email address.",
        params: &[
            TOKEN,
            p("receiver_email", "string", "The receiver's email."),
            p("amount", "number", "Dollars, more than 0."),
            opt("description", "string", "", "A description."),
        ],
    },
    ApiSpec { app: "music", name: "login", method: "POST", description: LOGIN_DOC, params: &[USERNAME, PASSWORD] },
    ApiSpec {
        app: "music",
        name: "search_songs",
        method: "GET",
        description: "Search the song catalogue by title or artist, one page at a time.",
        params: &[
            opt("query", "string", "", "Text to look for in title or artist."),
            opt("genre", "string", "None", "Only songs of this genre."),
            PAGE_INDEX,
            PAGE_LIMIT,
        ],
    },
    ApiSpec { app: "music", name: "show_song", method: "GET", description: "One song.", params: &[p("song_id", "integer", "The song's id.")] },
    ApiSpec {
        app: "music",
        name: "show_playlists",
        method: "GET",
        description: "Your playlists (id, title, number of songs), one page at a time.",
        params: &[TOKEN, PAGE_INDEX, PAGE_LIMIT],
    },
    ApiSpec {
        app: "music",
        name: "show_playlist",
        method: "GET",
        description: "One playlist with its songs.",
        params: &[TOKEN, p("playlist_id", "integer", "The playlist's id.")],
    },
    ApiSpec {
        app: "music",
        name: "create_playlist",
        method: "POST",
        description: "Create an empty playlist.",
        params: &[TOKEN, p("title", "string", "The title.")],
    },
    ApiSpec {
        app: "music",
        name: "add_song_to_playlist",
        method: "POST",
        description: "Add a song to one of your playlists.",
        params: &[TOKEN, p("playlist_id", "integer", "The playlist's id."), p("song_id", "integer", "The song's id.")],
    },
    ApiSpec {
        app: "music",
        name: "remove_song_from_playlist",
        method: "DELETE",
        description: "Remove a song from one of your playlists.",
        params: &[TOKEN, p("playlist_id", "integer", "The playlist's id."), p("song_id", "integer", "The song's id.")],
    },
    ApiSpec { app: "todo", name: "login", method: "POST", description: LOGIN_DOC, params: &[USERNAME, PASSWORD] },
    ApiSpec {
        app: "todo",
        name: "show_items",
        method: "GET",
        description: "Your to-do items, one page at a time.",
        params: &[TOKEN, opt("completed", "boolean", "None", "Only done (true) or open (false) items."), PAGE_INDEX, PAGE_LIMIT],
    },
    ApiSpec {
        app: "todo",
        name: "add_item",
        method: "POST",
        description: "Add a to-do item.",
        params: &[TOKEN, p("title", "string", "The title."), p("due_date", "string", "YYYY-MM-DD.")],
    },
    ApiSpec {
        app: "todo",
        name: "complete_item",
        method: "POST",
        description: "Mark an item as done.",
        params: &[TOKEN, p("item_id", "integer", "The item's id.")],
    },
    ApiSpec {
        app: "todo",
        name: "delete_item",
        method: "DELETE",
        description: "Delete an item.",
        params: &[TOKEN, p("item_id", "integer", "The item's id.")],
    },
];

pub fn api_spec(app: &str, api: &str) -> Option<&'static ApiSpec> {
    APIS.iter().find(|s| s.app == app && s.name == api)
}

/// `show_api_doc`'s reply for one API.
pub fn api_doc(s: &ApiSpec) -> Value {
    let params: Vec<Value> = s
        .params
        .iter()
        .map(|p| json!({"name": p.name, "type": p.ty, "required": p.required, "description": p.description, "default": p.default}))
        .collect();
    json!({
        "app_name": s.app,
        "api_name": s.name,
        "path": format!("/{}/{}", s.app, s.name),
        "method": s.method,
        "description": s.description,
        "parameters": params,
        "response_schemas": {"failure": {"message": "string"}},
    })
}

/// The task's completion, as `complete_task` recorded it.
#[derive(Clone, Debug, PartialEq)]
pub struct Completion {
    pub answer: Value,
    pub status: String,
}

/// One episode's world: the apps' data, the access tokens handed out, the completion.
pub struct World {
    pub data: Data,
    /// token -> app
    tokens: BTreeMap<String, String>,
    pub completion: Option<Completion>,
    pub api_calls: usize,
}

type Args = Map<String, Value>;

fn money(cents: i64) -> Value {
    json!((cents as f64) / 100.0)
}

fn page<T: Serialize>(items: &[T], args: &Args) -> Value {
    let index = args.get("page_index").and_then(Value::as_u64).unwrap_or(0) as usize;
    let limit = args.get("page_limit").and_then(Value::as_u64).unwrap_or(5) as usize;
    json!(items.iter().skip(index * limit).take(limit).collect::<Vec<_>>())
}

fn s<'a>(args: &'a Args, name: &str) -> Option<&'a str> {
    args.get(name).and_then(Value::as_str)
}

fn id(args: &Args, name: &str) -> u32 {
    args.get(name).and_then(Value::as_u64).unwrap_or(0) as u32
}

fn not_found(what: &str) -> ApiError {
    ApiError::new(404, format!("{what} not found."))
}

/// Check arguments against the API's parameters: no unknown names, every required one present,
/// types as documented, page limits in range.
fn check_args(spec: &ApiSpec, args: &Args) -> Result<(), ApiError> {
    for k in args.keys() {
        if !spec.params.iter().any(|p| p.name == k) {
            let known: Vec<&str> = spec.params.iter().map(|p| p.name).collect();
            return Err(ApiError::new(
                422,
                format!(
                    "Unexpected parameter '{k}' for {}.{} (parameters: {}).",
                    spec.app,
                    spec.name,
                    if known.is_empty() { "none".into() } else { known.join(", ") }
                ),
            ));
        }
    }
    for p in spec.params {
        match args.get(p.name) {
            None | Some(Value::Null) if p.required => return Err(ApiError::new(422, format!("Missing required parameter '{}'.", p.name))),
            None | Some(Value::Null) => {}
            Some(v) => {
                let ok = match p.ty {
                    "string" => v.is_string(),
                    "integer" => v.is_u64(),
                    "number" => v.is_number(),
                    "boolean" => v.is_boolean(),
                    "list" => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
                    _ => true,
                };
                if !ok {
                    return Err(ApiError::new(422, format!("Parameter '{}' must be of type {}, got {v}.", p.name, p.ty)));
                }
            }
        }
    }
    if let Some(l) = args.get("page_limit").and_then(Value::as_u64) {
        if !(1..=20).contains(&l) {
            return Err(ApiError::new(422, "Parameter 'page_limit' must be between 1 and 20."));
        }
    }
    Ok(())
}

impl World {
    pub fn new(data: Data) -> World {
        World { data, tokens: BTreeMap::new(), completion: None, api_calls: 0 }
    }

    fn token_of(app: &str, n: usize) -> String {
        // deterministic per episode, different per app and login
        let h = crate::seed::fnv1a(app.bytes().chain(n.to_le_bytes()));
        format!("{app}-{h:016x}")
    }

    fn authorise(&self, app: &str, args: &Args) -> Result<(), ApiError> {
        match s(args, "access_token") {
            Some(t) if self.tokens.get(t).is_some_and(|a| a == app) => Ok(()),
            _ => Err(ApiError::new(401, "Invalid or expired access token. Log in with this app's login API to get one.")),
        }
    }

    /// Call `apis.<app>.<api>(**args)`.
    pub fn call(&mut self, app: &str, api: &str, args: &Args) -> Result<Value, ApiError> {
        self.api_calls += 1;
        if !APPS.iter().any(|(a, _)| *a == app) {
            return Err(ApiError::new(404, format!("No app named '{app}'. Use apis.api_docs.show_app_descriptions() to see the apps.")));
        }
        let Some(spec) = api_spec(app, api) else {
            return Err(ApiError::new(
                404,
                format!("No API named '{api}' in app '{app}'. Use apis.api_docs.show_api_descriptions(app_name='{app}') to see its APIs."),
            ));
        };
        check_args(spec, args)?;
        if spec.params.iter().any(|p| p.name == "access_token") {
            self.authorise(app, args)?;
        }
        match (app, api) {
            ("api_docs", "show_app_descriptions") => Ok(json!(APPS.iter().map(|(n, d)| json!({"name": n, "description": d})).collect::<Vec<_>>())),
            ("api_docs", "show_api_descriptions") => {
                let a = s(args, "app_name").unwrap_or("");
                let list: Vec<Value> = APIS.iter().filter(|x| x.app == a).map(|x| json!({"name": x.name, "description": x.description})).collect();
                if list.is_empty() {
                    return Err(not_found(&format!("App '{a}'")));
                }
                Ok(json!(list))
            }
            ("api_docs", "show_api_doc") => {
                let (a, n) = (s(args, "app_name").unwrap_or(""), s(args, "api_name").unwrap_or(""));
                api_spec(a, n).map(api_doc).ok_or_else(|| not_found(&format!("API '{a}.{n}'")))
            }
            ("supervisor", "show_profile") => Ok(json!(self.data.supervisor)),
            ("supervisor", "show_account_passwords") => {
                Ok(json!(self.data.passwords.iter().map(|(a, p)| json!({"account_name": a, "password": p})).collect::<Vec<_>>()))
            }
            ("supervisor", "complete_task") => {
                let status = s(args, "status").unwrap_or("success").to_string();
                if status != "success" && status != "fail" {
                    return Err(ApiError::new(422, "Parameter 'status' must be 'success' or 'fail'."));
                }
                if self.completion.is_some() {
                    return Err(ApiError::new(409, "The task is already completed."));
                }
                self.completion = Some(Completion { answer: args.get("answer").cloned().unwrap_or(Value::Null), status });
                Ok(json!({"message": "Task marked as completed."}))
            }
            (_, "login") => {
                let ok = s(args, "username") == Some(self.data.supervisor.email.as_str())
                    && self.data.passwords.get(app).map(String::as_str) == s(args, "password");
                if !ok {
                    return Err(ApiError::new(401, "Invalid credentials."));
                }
                let t = Self::token_of(app, self.tokens.len());
                self.tokens.insert(t.clone(), app.to_string());
                Ok(json!({"access_token": t, "token_type": "Bearer"}))
            }
            _ => self.app_call(app, api, args),
        }
    }

    fn app_call(&mut self, app: &str, api: &str, args: &Args) -> Result<Value, ApiError> {
        let d = &mut self.data;
        match (app, api) {
            ("notes", "show_notes") => {
                let q = s(args, "query").unwrap_or("").to_lowercase();
                let list: Vec<Value> = d
                    .notes
                    .iter()
                    .filter(|n| n.title.to_lowercase().contains(&q))
                    .map(|n| json!({"note_id": n.note_id, "title": n.title, "tags": n.tags}))
                    .collect();
                Ok(page(&list, args))
            }
            ("notes", "show_note") => d.notes.iter().find(|n| n.note_id == id(args, "note_id")).map(|n| json!(n)).ok_or_else(|| not_found("Note")),
            ("notes", "create_note") => {
                let note_id = d.notes.iter().map(|n| n.note_id).max().unwrap_or(0) + 1;
                let tags = args
                    .get("tags")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(|t| t.as_str().map(str::to_string)).collect())
                    .unwrap_or_default();
                d.notes.push(Note {
                    note_id,
                    title: s(args, "title").unwrap_or("").into(),
                    content: s(args, "content").unwrap_or("").into(),
                    tags,
                    created_at: NOW.into(),
                });
                Ok(json!({"message": "Note created.", "note_id": note_id}))
            }
            ("notes", "update_note") => {
                let n = d.notes.iter_mut().find(|n| n.note_id == id(args, "note_id")).ok_or_else(|| not_found("Note"))?;
                if let Some(t) = s(args, "title") {
                    n.title = t.into();
                }
                if let Some(c) = s(args, "content") {
                    n.content = c.into();
                }
                Ok(json!({"message": "Note updated."}))
            }
            ("notes", "delete_note") => {
                let before = d.notes.len();
                d.notes.retain(|n| n.note_id != id(args, "note_id"));
                if d.notes.len() == before {
                    return Err(not_found("Note"));
                }
                Ok(json!({"message": "Note deleted."}))
            }
            ("contacts", "search_contacts") => {
                let q = s(args, "query").unwrap_or("").to_lowercase();
                let rel = s(args, "relationship").map(str::to_lowercase);
                let list: Vec<&Contact> = d
                    .contacts
                    .iter()
                    .filter(|c| {
                        let hay = format!("{} {} {}", c.first_name, c.last_name, c.email).to_lowercase();
                        q.split_whitespace().all(|w| hay.contains(w)) && rel.as_ref().is_none_or(|r| &c.relationship == r)
                    })
                    .collect();
                Ok(page(&list, args))
            }
            ("contacts", "show_contact") => {
                d.contacts.iter().find(|c| c.contact_id == id(args, "contact_id")).map(|c| json!(c)).ok_or_else(|| not_found("Contact"))
            }
            ("contacts", "update_contact") => {
                let c = d.contacts.iter_mut().find(|c| c.contact_id == id(args, "contact_id")).ok_or_else(|| not_found("Contact"))?;
                if let Some(e) = s(args, "email") {
                    if !e.contains('@') {
                        return Err(ApiError::new(422, "Parameter 'email' is not a valid email address."));
                    }
                    c.email = e.into();
                }
                if let Some(p) = s(args, "phone_number") {
                    c.phone_number = p.into();
                }
                Ok(json!({"message": "Contact updated."}))
            }
            ("contacts", "delete_contact") => {
                let before = d.contacts.len();
                d.contacts.retain(|c| c.contact_id != id(args, "contact_id"));
                if d.contacts.len() == before {
                    return Err(not_found("Contact"));
                }
                Ok(json!({"message": "Contact deleted."}))
            }
            ("wallet", "show_balance") => Ok(json!({"balance": money(d.balance_cents)})),
            ("wallet", "show_transactions") => {
                let me = d.supervisor.email.clone();
                let dir = s(args, "direction").unwrap_or("all");
                if !["all", "sent", "received"].contains(&dir) {
                    return Err(ApiError::new(422, "Parameter 'direction' must be 'sent', 'received' or 'all'."));
                }
                let with = s(args, "email");
                let list: Vec<Value> = d
                    .transactions
                    .iter()
                    .rev()
                    .filter(|t| match dir {
                        "sent" => t.sender_email == me,
                        "received" => t.receiver_email == me,
                        _ => true,
                    })
                    .filter(|t| with.is_none_or(|w| t.sender_email == w || t.receiver_email == w))
                    .map(|t| json!({"transaction_id": t.transaction_id, "sender_email": t.sender_email, "receiver_email": t.receiver_email, "amount": money(t.amount_cents), "description": t.description, "created_at": t.created_at}))
                    .collect();
                Ok(page(&list, args))
            }
            ("wallet", "send_money") => {
                let amount = args.get("amount").and_then(Value::as_f64).unwrap_or(0.0);
                let cents = (amount * 100.0).round() as i64;
                if cents <= 0 {
                    return Err(ApiError::new(422, "Parameter 'amount' must be more than 0."));
                }
                if cents > d.balance_cents {
                    return Err(ApiError::new(422, "Insufficient balance."));
                }
                let to = s(args, "receiver_email").unwrap_or("").to_string();
                if !d.contacts.iter().any(|c| c.email == to) {
                    return Err(ApiError::new(404, format!("No wallet account with the email '{to}'.")));
                }
                let transaction_id = d.transactions.iter().map(|t| t.transaction_id).max().unwrap_or(0) + 1;
                d.balance_cents -= cents;
                d.transactions.push(Transaction {
                    transaction_id,
                    sender_email: d.supervisor.email.clone(),
                    receiver_email: to,
                    amount_cents: cents,
                    description: s(args, "description").unwrap_or("").into(),
                    created_at: NOW.into(),
                });
                Ok(json!({"message": "Money sent.", "transaction_id": transaction_id}))
            }
            ("music", "search_songs") => {
                let q = s(args, "query").unwrap_or("").to_lowercase();
                let genre = s(args, "genre").map(str::to_lowercase);
                let list: Vec<&Song> = d
                    .songs
                    .iter()
                    .filter(|x| {
                        format!("{} {}", x.title, x.artist).to_lowercase().contains(&q) && genre.as_ref().is_none_or(|g| &x.genre.to_lowercase() == g)
                    })
                    .collect();
                Ok(page(&list, args))
            }
            ("music", "show_song") => d.songs.iter().find(|x| x.song_id == id(args, "song_id")).map(|x| json!(x)).ok_or_else(|| not_found("Song")),
            ("music", "show_playlists") => {
                let list: Vec<Value> =
                    d.playlists.iter().map(|p| json!({"playlist_id": p.playlist_id, "title": p.title, "song_count": p.song_ids.len()})).collect();
                Ok(page(&list, args))
            }
            ("music", "show_playlist") => {
                let pl = d.playlists.iter().find(|p| p.playlist_id == id(args, "playlist_id")).ok_or_else(|| not_found("Playlist"))?;
                let songs: Vec<Value> = pl
                    .song_ids
                    .iter()
                    .filter_map(|sid| d.songs.iter().find(|x| x.song_id == *sid))
                    .map(|x| json!({"song_id": x.song_id, "title": x.title, "artist": x.artist}))
                    .collect();
                Ok(json!({"playlist_id": pl.playlist_id, "title": pl.title, "songs": songs}))
            }
            ("music", "create_playlist") => {
                let playlist_id = d.playlists.iter().map(|p| p.playlist_id).max().unwrap_or(0) + 1;
                d.playlists.push(Playlist { playlist_id, title: s(args, "title").unwrap_or("").into(), song_ids: vec![] });
                Ok(json!({"message": "Playlist created.", "playlist_id": playlist_id}))
            }
            ("music", "add_song_to_playlist") | ("music", "remove_song_from_playlist") => {
                let sid = id(args, "song_id");
                if !d.songs.iter().any(|x| x.song_id == sid) {
                    return Err(not_found("Song"));
                }
                let pl = d.playlists.iter_mut().find(|p| p.playlist_id == id(args, "playlist_id")).ok_or_else(|| not_found("Playlist"))?;
                if api == "add_song_to_playlist" {
                    if pl.song_ids.contains(&sid) {
                        return Err(ApiError::new(409, "The song is already in the playlist."));
                    }
                    pl.song_ids.push(sid);
                    Ok(json!({"message": "Song added."}))
                } else {
                    let before = pl.song_ids.len();
                    pl.song_ids.retain(|x| *x != sid);
                    if before == pl.song_ids.len() {
                        return Err(not_found("Song in the playlist"));
                    }
                    Ok(json!({"message": "Song removed."}))
                }
            }
            ("todo", "show_items") => {
                let done = args.get("completed").and_then(Value::as_bool);
                let list: Vec<&TodoItem> = d.todo.iter().filter(|i| done.is_none_or(|c| i.completed == c)).collect();
                Ok(page(&list, args))
            }
            ("todo", "add_item") => {
                let item_id = d.todo.iter().map(|i| i.item_id).max().unwrap_or(0) + 1;
                d.todo.push(TodoItem {
                    item_id,
                    title: s(args, "title").unwrap_or("").into(),
                    due_date: s(args, "due_date").unwrap_or("").into(),
                    completed: false,
                });
                Ok(json!({"message": "Item added.", "item_id": item_id}))
            }
            ("todo", "complete_item") => {
                let it = d.todo.iter_mut().find(|i| i.item_id == id(args, "item_id")).ok_or_else(|| not_found("Item"))?;
                it.completed = true;
                Ok(json!({"message": "Item completed."}))
            }
            ("todo", "delete_item") => {
                let before = d.todo.len();
                d.todo.retain(|i| i.item_id != id(args, "item_id"));
                if d.todo.len() == before {
                    return Err(not_found("Item"));
                }
                Ok(json!({"message": "Item deleted."}))
            }
            _ => Err(ApiError::new(500, format!("{app}.{api} is documented but not implemented."))),
        }
    }
}
