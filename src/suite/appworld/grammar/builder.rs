//! Building one code cell as slot decisions (kind, app, API, each parameter's value, paging,
//! answer), and the text of the non-acting calls.

use super::*;

pub(super) struct Builder<'a> {
    v: &'a AwView,
    /// [`AwView::relevant`], worked out once per cell: the kind and the app decisions read it.
    relevant: Vec<(String, String)>,
    decisions: Vec<(Decision, usize)>,
}

impl Builder<'_> {
    pub(super) fn decide(&mut self, d: Decision, ch: &mut dyn Chooser) -> Option<usize> {
        decide_into(&mut self.decisions, d, ch)
    }

    pub(super) fn state(&self, slot: &str, label: &str, out: &mut Vec<Feature>) {
        let v = self.v;
        out.push(f(&[slot, label, "bias"]));
        out.push(f(&[slot, label, "apps_known", if v.apps.is_empty() { "n" } else { "y" }]));
        out.push(f(&[slot, label, "logged", if v.logged_in.is_empty() { "n" } else { "y" }]));
        out.push(f(&[slot, label, "q", if v.question { "y" } else { "n" }]));
        let calls = v.cells.iter().filter(|c| !c.failed && c.code.starts_with('r')).count();
        out.push(f(&[
            slot,
            label,
            "calls",
            match calls {
                0 => "0",
                1 => "1",
                _ => "2+",
            },
        ]));
        match v.cells.last() {
            Some(c) if c.failed => out.push(f(&[slot, label, "last", "error"])),
            Some(c) if c.output.trim() == "[]" => out.push(f(&[slot, label, "last", "empty"])),
            Some(_) => out.push(f(&[slot, label, "last", "ok"])),
            None => out.push(f(&[slot, label, "last", "none"])),
        }
    }

    pub(super) fn kind(&mut self, ch: &mut dyn Chooser) -> Option<&'static str> {
        let v = self.v;
        let named: Vec<&String> = v.apps.iter().filter(|a| v.named(a) && *a != "api_docs" && *a != "supervisor").collect();
        let lists_missing = named.iter().any(|a| !v.apis.contains_key(*a));
        let relevant = &self.relevant;
        let need_doc = relevant.iter().any(|k| !v.docs.contains_key(k));
        let need_login = named.iter().any(|a| v.docs.keys().any(|(x, _)| x == *a) && !v.logged_in.contains(*a));
        let need_call = v.recall().is_some()
            || relevant.iter().any(|(app, api)| v.docs.contains_key(&(app.clone(), api.clone())) && v.logged_in.contains(app) && !v.called(app, api));
        let called = v.cells.iter().any(|c| !c.failed && c.code.starts_with('r'));
        let mut d = Decision { slot: "kind", labels: vec![], options: vec![], prior: vec![] };
        let kinds = ["apps", "apis_of", "doc", "login", "call", "complete"];
        for k in kinds {
            let mut fs = Vec::new();
            self.state("kind", k, &mut fs);
            let next = match k {
                "apps" => v.apps.is_empty(),
                "apis_of" => !v.apps.is_empty() && lists_missing,
                "doc" => !lists_missing && need_doc,
                "login" => !lists_missing && !need_doc && need_login,
                "call" => !need_doc && !need_login && need_call,
                _ => called && !need_call && v.cells.last().is_some_and(|c| !c.failed),
            };
            let mut prior = 0.0;
            if next {
                prior += innate::NEXT_STEP;
                fs.push(f(&["kind", "next"]));
            }
            if k == "complete" && !called {
                prior -= innate::NEXT_STEP;
            }
            if k == "login" && v.feedback_mentions("log in") && need_login {
                prior += innate::FOLLOW_HINT;
            }
            if k == "doc" && v.feedback_mentions("show_api_doc") {
                prior += innate::FOLLOW_HINT / 2.0;
            }
            if k == "call" && (v.feedback_mentions("more pages") || v.narrow.is_some()) {
                prior += innate::FOLLOW_HINT / 2.0;
            }
            d.push(k, fs, prior);
        }
        Some(kinds[self.decide(d, ch)?])
    }

    /// The app a cell of kind `kind` is for: one the instruction names, preferably one where
    /// that kind of cell still has something to do (an API list not read, a relevant doc not
    /// read, no login yet, a relevant API not called).
    pub(super) fn app(&mut self, slot: &'static str, kind: &str, options: Vec<String>, ch: &mut dyn Chooser) -> Option<String> {
        let v = self.v;
        let relevant = &self.relevant;
        let mut d = Decision { slot, labels: vec![], options: vec![], prior: vec![] };
        for a in &options {
            let named = v.named(a);
            let of_app = || relevant.iter().filter(move |(x, _)| x == a);
            let pending = match kind {
                "apis_of" => !v.apis.contains_key(a),
                "doc" => of_app().any(|k| !v.docs.contains_key(k)),
                "login" => !v.logged_in.contains(a),
                "call" => of_app().any(|(x, api)| !v.called(x, api)) || v.recall().is_some_and(|(x, _)| x == a),
                _ => true,
            };
            let fs = vec![
                f(&[slot, "named", if named { "y" } else { "n" }]),
                f(&[slot, "logged", if v.logged_in.contains(a) { "y" } else { "n" }]),
                f(&[slot, "docs", if v.apis.contains_key(a) { "y" } else { "n" }]),
                f(&[slot, kind, "pending", if pending { "y" } else { "n" }]),
            ];
            d.push(a.clone(), fs, if named { 1.0 } else { 0.0 } + if pending { 0.5 } else { -0.5 });
        }
        let i = self.decide(d, ch)?;
        Some(options[i].clone())
    }

    pub(super) fn api(&mut self, app: &str, with_doc: bool, ch: &mut dyn Chooser) -> Option<String> {
        let v = self.v;
        let list: Vec<String> = v.apis.get(app).cloned().unwrap_or_default().into_iter().filter(|a| a != "login").collect();
        let mut d = Decision { slot: if with_doc { "doc_api" } else { "api" }, labels: vec![], options: vec![], prior: vec![] };
        let slot = d.slot;
        for a in &list {
            let class = api_class(a);
            let overlap = api_overlap(a, v);
            let documented = v.docs.contains_key(&(app.to_string(), a.clone()));
            let called = v.called(app, a);
            let fs = vec![
                f(&[slot, "class", class, "q", if v.question { "y" } else { "n" }]),
                f(&[slot, "overlap", if overlap { "y" } else { "n" }]),
                f(&[slot, "documented", if documented { "y" } else { "n" }]),
                f(&[slot, "called", if called { "y" } else { "n" }]),
                f(&[slot, "class", class, "called_any", if v.cells.iter().any(|c| c.code.starts_with('r')) { "y" } else { "n" }]),
            ];
            let mut prior = relevance(a, v).clamp(-1.5, 2.0);
            // a call whose required value nothing shown can supply yet comes later
            if !with_doc && v.docs.get(&(app.to_string(), a.clone())).is_some_and(|ps| ps.iter().any(|p| !v.can_feed(p))) {
                prior -= 3.0;
            }
            if with_doc && documented {
                prior -= 2.0;
            }
            if !with_doc && !documented {
                prior -= 1.0;
            }
            let recall = !with_doc && v.recall().is_some_and(|(x, y)| x == app && y == a);
            if recall {
                prior += innate::FOLLOW_HINT;
            } else if !with_doc && called {
                prior -= 2.0;
            }
            if !with_doc && class == "read" && !v.cells.iter().any(|c| c.code.starts_with('r')) {
                prior += 0.5;
            }
            d.push(a.clone(), fs, prior);
        }
        let i = self.decide(d, ch)?;
        Some(list[i].clone())
    }

    /// The value of one parameter, as Python; `None` = omit it. `Err(())` = no option.
    /// `narrowing`: a message asked to call this listing again with filters set from the task,
    /// which a model follows by giving a filter the task's value of its kind (an email to an
    /// email, a date to a date, a name or quoted text to the search query, a listed value the
    /// task says).
    pub(super) fn arg(
        &mut self,
        app: &str,
        p: &ParamDoc,
        each: Option<&[Map<String, Value>]>,
        narrowing: bool,
        ch: &mut dyn Chooser,
    ) -> Option<Option<String>> {
        let v = self.v;
        // (label, python, features, prior)
        let mut opts: Vec<(String, Option<String>, Vec<Feature>, f32)> = Vec::new();
        let slot = "arg";
        if p.name == "access_token" {
            if v.logged_in.contains(app) {
                return Some(Some(format!("tok_{app}")));
            }
            opts.push(("omit".into(), None, vec![f(&[slot, "token_missing"])], 0.0));
        } else {
            if !p.required {
                opts.push(("omit".into(), None, vec![f(&[slot, "omit", p.ty.as_str()]), f(&[slot, "omit"])], 0.5));
            }
            for (t, k) in &v.spans {
                if span_fits(&p.ty, k) {
                    let kind_of = if p.name.contains("email") {
                        "email"
                    } else if p.name.contains("date") {
                        "date"
                    } else {
                        "text"
                    };
                    // Whether the instruction names this parameter right before this span, before
                    // another span, or not at all ("titled 'X' with the content 'Y'").
                    let cue = if cue_names(&cue_word(&v.instruction, t), &p.name) {
                        "this"
                    } else if v.spans.iter().any(|(o, _)| cue_names(&cue_word(&v.instruction, o), &p.name)) {
                        "other"
                    } else {
                        "none"
                    };
                    // the span is what the parameter takes: an email for an email, a date for a
                    // date, a name or a quoted text for a search query
                    let agrees = match kind_of {
                        "text" => p.name == "query" && matches!(*k, "quoted" | "name"),
                        kind => kind == *k,
                    };
                    opts.push((
                        format!("span:{t}"),
                        Some(span_py(t, k)),
                        vec![
                            f(&[slot, "span", k, p.ty.as_str()]),
                            f(&[slot, "span", k, "param", kind_of]),
                            f(&[slot, "span", "cue", cue]),
                            f(&[slot, "span", "kind_agrees", if agrees { "y" } else { "n" }]),
                        ],
                        0.3 + if narrowing && agrees { innate::FOLLOW_HINT } else { 0.0 },
                    ));
                }
            }
            for l in &p.listed {
                let in_q = v.words.contains(&l.to_lowercase());
                opts.push((
                    format!("listed:{l}"),
                    Some(py_str(l)),
                    vec![f(&[slot, "listed", if in_q { "inq" } else { "no" }])],
                    if in_q { 1.0 + if narrowing { innate::FOLLOW_HINT } else { 0.0 } } else { 0.0 },
                ));
            }
            if p.ty == "boolean" {
                for b in ["True", "False"] {
                    opts.push((format!("bool:{b}"), Some(b.into()), vec![f(&[slot, "bool", b])], 0.0));
                }
            }
            if let Some(items) = each {
                for field in items.first().map(|i| i.keys().cloned().collect::<Vec<_>>()).unwrap_or_default() {
                    if field_feeds(&field, &p.name) {
                        opts.push((format!("item:{field}"), Some(format!("x[{}]", py_str(&field))), vec![f(&[slot, "item_field"])], 1.0));
                    }
                }
            }
            // values earlier outputs showed under a field feeding this parameter
            let mut seen = BTreeSet::new();
            for (_, val) in v.values.iter().rev().take(4) {
                let items: Vec<&Map<String, Value>> = match val {
                    Value::Array(a) => a.iter().filter_map(Value::as_object).collect(),
                    Value::Object(o) => vec![o],
                    _ => vec![],
                };
                for it in items {
                    for (k, x) in it {
                        if !field_feeds(k, &p.name) || x.is_array() || x.is_object() {
                            continue;
                        }
                        let label = format!("out:{}", value_py(x));
                        if !seen.insert(label.clone()) {
                            continue;
                        }
                        let about = v.spans.iter().any(|(s, _)| item_matches(it, s));
                        // An output's own field copied back into a write (email -> email) changes
                        // nothing; outputs feed ids and differently named fields (email -> receiver_email).
                        let copy_back = k == &p.name && !p.name.ends_with("_id");
                        opts.push((
                            label,
                            Some(value_py(x)),
                            vec![
                                f(&[slot, "output", if about { "about" } else { "other" }]),
                                f(&[slot, "output", "copy_back", if copy_back { "y" } else { "n" }]),
                            ],
                            if about && !copy_back { 1.0 } else { 0.0 },
                        ));
                    }
                }
            }
        }
        let mut d = Decision { slot, labels: vec![], options: vec![], prior: vec![] };
        let mut pys = Vec::new();
        for (label, py, fs, prior) in opts {
            d.push(format!("{}={label}", p.name), fs, prior);
            pys.push(py);
        }
        let i = self.decide(d, ch)?;
        Some(pys[i].clone())
    }

    /// Loop over the last listing: every item, or those whose field relates to a span.
    /// A loop calls the API once per item, which is what the items are for when they feed one
    /// of its ids (`song_id` of each song); otherwise a single call is the innate choice.
    pub(super) fn each(&mut self, params: &[ParamDoc], ch: &mut dyn Chooser) -> Option<Option<Loop>> {
        let v = self.v;
        let Some((var, items)) = &v.last_list else { return Some(None) };
        let feeds_id =
            params.iter().any(|p| p.required && p.name.ends_with("_id") && items.first().is_some_and(|i| i.keys().any(|k| field_feeds(k, &p.name))));
        let mut d = Decision { slot: "each", labels: vec![], options: vec![], prior: vec![] };
        let mut out: Vec<Option<Loop>> = vec![None];
        d.push(
            "none",
            vec![f(&["each", "none"]), f(&["each", "none", "feeds_id", if feeds_id { "y" } else { "n" }])],
            if feeds_id { 0.0 } else { 1.0 },
        );
        d.push("all", vec![f(&["each", "all"])], 0.0);
        out.push(Some((var.clone(), items.clone(), "True".into())));
        let fields: Vec<String> = items.first().map(|i| i.keys().cloned().collect()).unwrap_or_default();
        for field in fields {
            for (t, k) in &v.spans {
                let eq: Vec<_> =
                    items.iter().filter(|i| i.get(&field).and_then(Value::as_str).is_some_and(|s| s.eq_ignore_ascii_case(t))).cloned().collect();
                if !eq.is_empty() {
                    d.push(format!("{field}=={t}"), vec![f(&["each", "eq", k])], 0.5);
                    out.push(Some((var.clone(), eq, format!("x[{}] == {}", py_str(&field), py_str(t)))));
                }
                if *k == "date" && items.iter().any(|i| i.get(&field).and_then(Value::as_str).is_some_and(|s| s.len() == 10 && s.starts_with("20"))) {
                    d.push(format!("{field}<={t}"), vec![f(&["each", "le", "date"])], 0.5);
                    let le: Vec<_> =
                        items.iter().filter(|i| i.get(&field).and_then(Value::as_str).is_some_and(|s| s <= t.as_str())).cloned().collect();
                    out.push(Some((var.clone(), le, format!("x[{}] <= {}", py_str(&field), py_str(t)))));
                }
            }
        }
        let i = self.decide(d, ch)?;
        Some(out[i].clone())
    }

    pub(super) fn answer(&mut self, ch: &mut dyn Chooser) -> Option<Option<String>> {
        let v = self.v;
        let mut d = Decision { slot: "answer", labels: vec![], options: vec![], prior: vec![] };
        let mut out: Vec<Option<String>> = vec![None];
        let lower = v.instruction.to_lowercase();
        let (how_many, in_total) = (lower.starts_with("how many"), lower.contains("in total"));
        let shape = |asked: bool| if asked { innate::ANSWER_SHAPE } else { 0.0 };
        // What a kind of answer is learned for depends on what the question asks ("what does
        // ... say" is answered by a field, "how many" by a count).
        let q_shape = if how_many {
            "count"
        } else if in_total {
            "total"
        } else {
            "value"
        };
        d.push("none", vec![f(&["answer", "none", "q", if v.question { "y" } else { "n" }])], if v.question { -1.0 } else { 1.0 });
        if let Some((_, val)) = v.values.last() {
            match val {
                Value::Object(o) => {
                    for (k, x) in o {
                        match x {
                            Value::Array(a) => {
                                d.push(format!("len:{k}"), vec![f(&["answer", "len_field", q_shape])], shape(how_many));
                                out.push(Some(a.len().to_string()));
                            }
                            Value::Object(_) => {}
                            _ => {
                                let overlap = v.words.contains(&k.to_lowercase()) || k.split('_').any(|w| v.words.contains(w));
                                d.push(
                                    format!("field:{k}"),
                                    vec![f(&["answer", "field", if overlap { "named" } else { "other" }, q_shape])],
                                    if overlap { 0.5 } else { 0.0 },
                                );
                                out.push(Some(value_py(x)));
                            }
                        }
                    }
                }
                Value::Array(a) => {
                    let items: Vec<&Map<String, Value>> = a.iter().filter_map(Value::as_object).collect();
                    d.push("count", vec![f(&["answer", "count", q_shape])], shape(how_many));
                    out.push(Some(items.len().to_string()));
                    let about: Vec<&&Map<String, Value>> = items.iter().filter(|i| v.spans.iter().any(|(s, _)| item_matches(i, s))).collect();
                    if let Some(first) = about.first() {
                        for (k, x) in first.iter() {
                            if x.is_string() || x.is_number() {
                                let overlap = k.split('_').any(|w| v.words.contains(w));
                                d.push(
                                    format!("about:{k}"),
                                    vec![f(&["answer", "about_field", if overlap { "named" } else { "other" }, q_shape])],
                                    if overlap { 0.5 } else { 0.0 },
                                );
                                out.push(Some(value_py(x)));
                            }
                        }
                    }
                    // sums of a numeric field over the items about a span
                    if let Some(first) = items.first() {
                        for (k, x) in first.iter() {
                            if !x.is_number() || k.ends_with("_id") {
                                continue;
                            }
                            for (s, _) in &v.spans {
                                let sel: Vec<f64> =
                                    items.iter().filter(|i| item_matches(i, s)).filter_map(|i| i.get(k).and_then(Value::as_f64)).collect();
                                if !sel.is_empty() {
                                    let total = (sel.iter().sum::<f64>() * 100.0).round() / 100.0;
                                    d.push(format!("sum:{k}|{s}"), vec![f(&["answer", "sum", q_shape])], shape(in_total));
                                    out.push(Some(total.to_string()));
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        let i = self.decide(d, ch)?;
        Some(out[i].clone())
    }
}

pub(super) fn cell(code: String, b: Builder) -> Built {
    Built { tool: TOOL.into(), arguments: serde_json::json!({ "code": code }), decisions: b.decisions }
}

/// Build one code cell from the view.
pub fn build(v: &AwView, ch: &mut dyn Chooser) -> Option<Built> {
    let mut b = Builder { v, relevant: v.relevant(), decisions: Vec::new() };
    let kind = b.kind(ch)?;
    let n = v.cells.len();
    match kind {
        "apps" => Some(cell("print(apis.api_docs.show_app_descriptions())".into(), b)),
        "apis_of" => {
            let app = b.app("app", "apis_of", v.apps.iter().filter(|a| *a != "api_docs").cloned().collect(), ch)?;
            Some(cell(format!("print(apis.api_docs.show_api_descriptions(app_name={}))", py_str(&app)), b))
        }
        "doc" => {
            let app = b.app("app", "doc", v.apis.keys().filter(|a| *a != "api_docs").cloned().collect(), ch)?;
            let api = b.api(&app, true, ch)?;
            Some(cell(format!("print(apis.api_docs.show_api_doc(app_name={}, api_name={}))", py_str(&app), py_str(&api)), b))
        }
        "login" => {
            let app = b.app("app", "login", v.apps.iter().filter(|a| !matches!(a.as_str(), "api_docs" | "supervisor")).cloned().collect(), ch)?;
            Some(cell(
                format!(
                    "pw = {{a['account_name']: a['password'] for a in apis.supervisor.show_account_passwords()}}\ntok_{app} = apis.{app}.login(username={}, password=pw[{}])['access_token']\nprint('logged in to {app}')",
                    py_str(&v.email),
                    py_str(&app)
                ),
                b,
            ))
        }
        "call" => {
            let app = b.app("app", "call", v.apis.keys().filter(|a| !matches!(a.as_str(), "api_docs" | "supervisor")).cloned().collect(), ch)?;
            let api = b.api(&app, false, ch)?;
            let params = v
                .docs
                .get(&(app.clone(), api.clone()))
                .cloned()
                .unwrap_or_else(|| vec![ParamDoc { name: "access_token".into(), ty: "string".into(), required: true, listed: vec![] }]);
            let each = if api_class(&api) == "write" { b.each(&params, ch)? } else { None };
            let pages = params.iter().any(|p| p.name == "page_index");
            let narrowing = v.narrow.as_ref().is_some_and(|(x, y)| *x == app && *y == api);
            let mut args = Vec::new();
            for p in params.iter().filter(|p| p.name != "page_index" && p.name != "page_limit") {
                if let Some(val) = b.arg(&app, p, each.as_ref().map(|e| e.1.as_slice()), narrowing, ch)? {
                    args.push(format!("{}={val}", p.name));
                }
            }
            let all_pages = if pages {
                let mut d = Decision { slot: "pages", labels: vec![], options: vec![], prior: vec![] };
                d.push("one", vec![f(&["pages", "one"])], 0.0);
                let full = v
                    .cells
                    .iter()
                    .rev()
                    .find(|c| c.code.contains(&format!("apis.{app}.{api}(")))
                    .and_then(|c| py_literal(&c.output))
                    .and_then(|x| x.as_array().map(|a| a.len() == 5))
                    .unwrap_or(false);
                let hinted = v.feedback.iter().any(|f| tells_of_more_pages(f));
                d.push(
                    "all",
                    vec![
                        f(&["pages", "all"]),
                        f(&["pages", "all", "hinted", if hinted { "y" } else { "n" }]),
                        f(&["pages", "all", "full_before", if full { "y" } else { "n" }]),
                    ],
                    if hinted { innate::FOLLOW_HINT } else { innate::ONE_PAGE },
                );
                b.decide(d, ch)? == 1
            } else {
                false
            };
            let var = format!("r{n}");
            let call = format!("apis.{app}.{api}({})", args.join(", "));
            let code = match (&each, all_pages) {
                (Some((list, _, cond)), _) => format!("{var} = []\nfor x in {list}:\n    if {cond}:\n        {var}.append({call})\nprint({var})"),
                (None, true) => {
                    let sep = if args.is_empty() { "" } else { ", " };
                    format!(
                        "{var}, page = [], 0\nwhile True:\n    batch = apis.{app}.{api}({}{sep}page_index=page, page_limit=20)\n    if not batch:\n        break\n    {var} += batch\n    page += 1\nprint({var})",
                        args.join(", ")
                    )
                }
                (None, false) => format!("{var} = {call}\nprint({var})"),
            };
            Some(cell(code, b))
        }
        _ => {
            let answer = b.answer(ch)?;
            let code = match answer {
                Some(a) => format!("apis.supervisor.complete_task(answer={a})"),
                None => "apis.supervisor.complete_task()".into(),
            };
            Some(cell(code, b))
        }
    }
}

/// The reply for an extra call (plan / reflect) under a harness, from the same view.
pub fn note(v: &AwView, kind: CallKind) -> String {
    match kind {
        crate::message::CallKind::Plan => {
            let apps: Vec<&String> = v.apps.iter().filter(|a| v.named(a)).collect();
            format!("Read the API docs of {:?}, log in, read every page of the listings, then complete the task.", apps)
        }
        crate::message::CallKind::Reflect => {
            let last = v.cells.last().map(|c| c.output.lines().last().unwrap_or("").to_string()).unwrap_or_default();
            format!("The last cell failed: {last}")
        }
        _ => "OK".into(),
    }
}
