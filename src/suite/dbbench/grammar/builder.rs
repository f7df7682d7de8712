//! Building one action as slot decisions (kind, operation, columns, filter, conversion,
//! quoting, answer), each scored over generic features.

use super::*;

pub(super) struct Builder<'a> {
    view: &'a DbView,
    decisions: Vec<(Decision, usize)>,
    /// The column the query returns, once chosen.
    target: Option<String>,
    /// Question values already placed (a threshold, a first filter).
    used: Vec<String>,
}

impl<'a> Builder<'a> {
    pub(super) fn decide(&mut self, d: Decision, ch: &mut dyn Chooser) -> Option<usize> {
        decide_into(&mut self.decisions, d, ch)
    }

    pub(super) fn context_feats(&self, slot_name: &str, label: &str, out: &mut Vec<Feature>) {
        let v = self.view;
        out.push(f(&[slot_name, label, "bias"]));
        let step = match v.history.len() {
            0 => "0",
            1 => "1",
            2..=3 => "2-3",
            _ => "4+",
        };
        out.push(f(&[slot_name, label, "step", step]));
        out.push(f(&[slot_name, label, "inspected", if v.inspected() { "y" } else { "n" }]));
        out.push(f(&[slot_name, label, "queried", if v.queried() { "y" } else { "n" }]));
        let last = v.history.last().map(|h| h.kind.as_str()).unwrap_or("none");
        out.push(f(&[slot_name, label, "last", last]));
        if let Some(e) = &v.last_error {
            out.push(f(&[slot_name, label, "err", e]));
        }
        match &v.last_rows {
            Some(r) if r.is_empty() => out.push(f(&[slot_name, label, "rows", "empty"])),
            Some(r) if r.len() == 1 => out.push(f(&[slot_name, label, "rows", "one"])),
            Some(_) => out.push(f(&[slot_name, label, "rows", "many"])),
            None => {}
        }
        out.push(f(&[slot_name, label, "mut", v.mutation.unwrap_or("select")]));
    }

    pub(super) fn kind(&mut self, ch: &mut dyn Chooser) -> Option<String> {
        let v = self.view;
        let kinds = ["inspect", "query", "insert", "update", "delete", "commit"];
        let mut d = Decision { slot: "kind", labels: vec![], options: vec![], prior: vec![] };
        for k in kinds {
            // Context features only: the request's own wording enters through `asked` below,
            // so that "do what is asked" is one weight for every kind of request.
            let mut fs = Vec::new();
            self.context_feats("kind", k, &mut fs);
            let mut prior = 0.0;
            // reading the question: "Delete the row ..." asks for a DELETE, a question for a query
            let asked = v.mutation.unwrap_or("query");
            if k == asked {
                prior += innate::READ_REQUEST;
                // one weight for "do what the request asks", whatever it asks: it transfers to
                // requests of a kind never trained on
                fs.push(f(&["kind", "asked"]));
                fs.push(f(&["kind", "asked", if v.queried() { "after" } else { "first" }]));
            }
            // nothing to answer from yet
            if k == "commit" && !v.queried() {
                prior -= innate::READ_REQUEST;
            }
            if k == "commit" && v.feedback_mentions("commit it now") && v.last_rows.is_some() {
                prior += innate::FOLLOW_HINT;
            }
            // the same statement came back the same way twice: answer from it
            if k == "commit" && v.repeated_last() && v.queried() {
                prior += innate::FOLLOW_HINT;
            }
            if k != "commit" && k != "inspect" && v.feedback_mentions("not run any query") {
                prior += innate::FOLLOW_HINT;
            }
            // a hint proposing a look at the rows, not yet taken
            if k == "inspect" && !v.inspected() && v.feedback_mentions("select * from") {
                prior += innate::FOLLOW_HINT;
            }
            // asked to redo the query
            if k == asked && v.asked_to_requery() {
                prior += innate::FOLLOW_HINT;
            }
            d.push(k.to_string(), fs, prior);
        }
        let i = self.decide(d, ch)?;
        Some(kinds[i].to_string())
    }

    pub(super) fn column(&mut self, slot_name: &'static str, op: &str, exclude: &[&str], ch: &mut dyn Chooser) -> Option<String> {
        let v = self.view;
        let mut d = Decision { slot: slot_name, labels: vec![], options: vec![], prior: vec![] };
        let cls = op_class(op);
        for (ci, c) in v.columns.iter().enumerate() {
            if exclude.contains(&c.as_str()) {
                continue;
            }
            let m = col_match(c, &v.q_tokens);
            let mut fs = vec![
                f(&[slot_name, "match", bucket(m)]),
                f(&[slot_name, cls, "match", bucket(m)]),
                // the first column is usually the row's name: what a "which" question returns,
                // rarely what a "total" question adds up
                f(&[slot_name, cls, "first", if ci == 0 { "y" } else { "n" }]),
            ];
            if let Some(p) = col_position(c, &v.q_tokens) {
                let b = if p < 4 {
                    "early"
                } else if p < 10 {
                    "mid"
                } else {
                    "late"
                };
                fs.push(f(&[slot_name, cls, "pos", b]));
            }
            // Reading the request: the column a question names is what it asks about, or what
            // it compares on; a "which ... has the largest X" question asks for a row, whose
            // column it may not name.
            let prior = if slot_name == "measure" || (slot_name == "target" && cls != "rank") { innate::READ_REQUEST * m } else { 0.0 };
            d.push(c.clone(), fs, prior);
        }
        let i = self.decide(d, ch)?;
        Some(self.decisions.last().map(|(d, _)| d.labels[i].clone()).unwrap_or_default())
    }

    /// A (column, value) filter, or none.
    pub(super) fn filter(
        &mut self,
        slot_name: &'static str,
        op: &str,
        allow_none: bool,
        numbers_only: bool,
        exclude: &[&str],
        ch: &mut dyn Chooser,
    ) -> Option<Option<(String, String)>> {
        let v = self.view;
        let cls = op_class(op);
        let mut d = Decision { slot: slot_name, labels: vec![], options: vec![], prior: vec![] };
        let mut pairs: Vec<Option<(String, String)>> = Vec::new();
        if allow_none {
            let mut fs = vec![f(&[slot_name, "none"]), f(&[slot_name, cls, "none"])];
            fs.push(f(&[slot_name, "none", "spans", &v.spans.len().min(3).to_string()]));
            // reading the request: a value the question gives, not yet placed, is there to be
            // filtered on (a span that only names a column is not a value)
            let unplaced = v.spans.iter().take(5).any(|s| !self.used.contains(&s.text) && !v.names_column(&s.text));
            d.push("none", fs, if unplaced { -innate::READ_REQUEST } else { 0.0 });
            pairs.push(None);
        }
        let quoted: Vec<&Span> = v.spans.iter().filter(|s| s.kind == SpanKind::Quoted).collect();
        if allow_none && !numbers_only && quoted.len() >= 2 {
            let list = quoted.iter().map(|s| s.text.clone()).collect::<Vec<_>>().join("\u{1f}");
            for c in &v.columns {
                if exclude.contains(&c.as_str()) {
                    continue;
                }
                let m = col_match(c, &v.q_tokens);
                let fs = vec![
                    f(&[slot_name, "in"]),
                    f(&[slot_name, cls, "in"]),
                    f(&[slot_name, "in", "match", bucket(m)]),
                    f(&[slot_name, "in", "first_col", if v.columns.first() == Some(c) { "y" } else { "n" }]),
                    f(&[slot_name, "in", "n", &quoted.len().min(4).to_string()]),
                ];
                d.push(format!("{}|in:{}", c, quoted.len()), fs, 0.0);
                pairs.push(Some((c.clone(), format!("\u{1e}{list}"))));
            }
        }
        for s in v.spans.iter().take(5) {
            if numbers_only && s.kind != SpanKind::Number {
                continue;
            }
            for c in &v.columns {
                if exclude.contains(&c.as_str()) {
                    continue;
                }
                let m = col_match(c, &v.q_tokens);
                let kind = match s.kind {
                    SpanKind::Quoted => "quoted",
                    SpanKind::Number => "number",
                    SpanKind::Name => "name",
                };
                let mut fs = vec![f(&[slot_name, "span", kind]), f(&[slot_name, cls, "span", kind]), f(&[slot_name, "match", bucket(m)])];
                let prox = proximity(c, s, &v.q_tokens);
                fs.push(f(&[slot_name, "prox", prox]));
                fs.push(f(&[slot_name, "prox", prox, kind]));
                // the word before the value ("to", "is", "named", ...) says what role it plays
                if s.at > 0 {
                    if let Some(w) = v.q_tokens.get(s.at - 1) {
                        fs.push(f(&[slot_name, "prev", w]));
                    }
                }
                let order = v.spans.iter().position(|o| o.text == s.text).unwrap_or(0).min(3).to_string();
                fs.push(f(&[slot_name, "order", &order]));
                if v.columns.first() == Some(c) {
                    fs.push(f(&[slot_name, "first_col"]));
                }
                let fit = v.value_fit(c, &s.text);
                fs.push(f(&[slot_name, "fit", fit]));
                if self.target.as_deref() == Some(c.as_str()) {
                    fs.push(f(&[slot_name, "is_target"]));
                }
                // a value visibly belonging to a column is where an instruction model looks
                let mut prior = match fit {
                    _ if !slot_name.starts_with("where") => 0.0,
                    "seen" => innate::VISIBLE_FORMAT,
                    "shape" => innate::VISIBLE_FORMAT * 0.5,
                    "other" => -innate::VISIBLE_FORMAT * 0.5,
                    _ => 0.0,
                };
                // reading the request: the value a question gives is not the value it asks for
                if slot_name.starts_with("where") && self.target.as_deref() == Some(c.as_str()) {
                    prior -= innate::READ_REQUEST;
                }
                // reading the context: this very filter already came back empty
                if slot_name.starts_with("where") && v.filter_came_back_empty(c, &s.text) {
                    prior -= innate::READ_REQUEST;
                    fs.push(f(&[slot_name, "came_back_empty"]));
                }
                d.push(format!("{}|{}", c, s.text), fs, prior);
                pairs.push(Some((c.clone(), s.text.clone())));
            }
        }
        if d.options.is_empty() {
            return Some(None);
        }
        let i = self.decide(d, ch)?;
        Some(pairs[i].clone())
    }

    /// Compare filter values exactly or after trimming stored spaces.
    pub(super) fn match_mode(&mut self, ch: &mut dyn Chooser) -> Option<bool> {
        let view = self.view;
        let mut d = Decision { slot: "match", labels: vec![], options: vec![], prior: vec![] };
        for m in ["exact", "trim"] {
            let mut fs = vec![f(&["match", m, "bias"]), f(&["match", m, "mut", view.mutation.unwrap_or("select")])];
            if view.evidence.trailing_space {
                fs.push(f(&["match", m, "ev", "trailing_space"]));
            }
            if view.last_rows.as_ref().map(|r| r.is_empty()).unwrap_or(false) {
                fs.push(f(&["match", m, "last_empty"]));
            }
            if view.feedback_mentions("spacing") {
                fs.push(f(&["match", m, "hint"]));
            }
            d.labels.push(m.into());
            d.options.push(fs);
            let visible = view.evidence.trailing_space || view.feedback_mentions("spacing");
            d.prior.push(if m == "trim" && visible { innate::VISIBLE_FORMAT } else { 0.0 });
        }
        Some(self.decide(d, ch)? == 1)
    }

    /// Assign one value span to each column of an INSERT, column by column.
    pub(super) fn assign_values(&mut self, ch: &mut dyn Chooser) -> Option<Vec<String>> {
        let v = self.view;
        let spans: Vec<&Span> = {
            let quoted: Vec<&Span> = v.spans.iter().filter(|s| s.kind == SpanKind::Quoted).collect();
            if quoted.len() >= v.columns.len() {
                quoted
            } else {
                v.spans.iter().collect()
            }
        };
        let mut used = vec![false; spans.len()];
        let mut out = Vec::new();
        for (ci, c) in v.columns.iter().enumerate() {
            let mut d = Decision { slot: "value", labels: vec![], options: vec![], prior: vec![] };
            let mut idx = Vec::new();
            for (si, s) in spans.iter().enumerate() {
                if used[si] {
                    continue;
                }
                let prox = proximity(c, s, &v.q_tokens);
                let first_free = used.iter().position(|u| !u) == Some(si);
                let fs = vec![
                    f(&["value", "prox", prox]),
                    f(&["value", "first_free", if first_free { "y" } else { "n" }]),
                    f(&["value", "same_order", if si == ci { "y" } else { "n" }]),
                    f(&["value", "kind", if s.kind == SpanKind::Number { "number" } else { "text" }]),
                ];
                d.push(s.text.clone(), fs, 0.0);
                idx.push(si);
            }
            if d.options.is_empty() {
                out.push(String::new());
                continue;
            }
            let k = self.decide(d, ch)?;
            used[idx[k]] = true;
            out.push(spans[idx[k]].text.clone());
        }
        Some(out)
    }

    pub(super) fn conversion(&mut self, op: &str, ch: &mut dyn Chooser) -> Option<String> {
        let v = self.view;
        let e = &v.evidence;
        let hint = v.feedback_mentions("convert") || v.feedback_mentions("replace(") || v.feedback_mentions("separator");
        // A REPLACE points at a character to remove, so it exists only once the context shows
        // one (a separator, unit or currency sign in a seen value) or a hint names it: blind,
        // the grammar can only cast.
        let mut opts = vec!["none", "cast"];
        if e.commas || hint {
            opts.push("strip_commas");
        }
        if e.unit.is_some() || e.currency.is_some() {
            opts.push("strip_all");
        }
        let mut d = Decision { slot: "conv", labels: vec![], options: vec![], prior: vec![] };
        for o in &opts {
            let mut fs = vec![f(&["conv", o, "bias"]), f(&["conv", o, "op", op]), f(&["conv", o, "cls", op_class(op)])];
            if e.commas {
                fs.push(f(&["conv", o, "ev", "commas"]));
            }
            if e.unit.is_some() {
                fs.push(f(&["conv", o, "ev", "unit"]));
            }
            if e.currency.is_some() {
                fs.push(f(&["conv", o, "ev", "currency"]));
            }
            if e.percent {
                fs.push(f(&["conv", o, "ev", "percent"]));
            }
            if hint {
                fs.push(f(&["conv", o, "hint"]));
            }
            self.context_feats("conv", o, &mut fs);
            let mut prior = 0.0;
            let visible = e.commas || e.unit.is_some() || e.currency.is_some();
            if visible && (*o == "strip_commas" || *o == "strip_all") {
                prior += innate::VISIBLE_FORMAT;
            }
            if (e.unit.is_some() || e.currency.is_some()) && *o == "strip_all" {
                prior += innate::VISIBLE_FORMAT;
            }
            if hint && (*o == "strip_commas" || *o == "strip_all") {
                prior += innate::FOLLOW_HINT;
            }
            d.push(o.to_string(), fs, prior);
        }
        let i = self.decide(d, ch)?;
        Some(opts[i].to_string())
    }

    pub(super) fn quoting(&mut self, names: &[&str], ch: &mut dyn Chooser) -> Option<bool> {
        let v = self.view;
        if !names.iter().any(|n| needs_quotes(n)) {
            return Some(true);
        }
        let hint = v.feedback_mentions("backquote");
        let mut d = Decision { slot: "quote", labels: vec![], options: vec![], prior: vec![] };
        for o in ["backquote", "bare"] {
            let mut fs = vec![f(&["quote", o, "bias"])];
            if hint {
                fs.push(f(&["quote", o, "hint"]));
            }
            if let Some(e) = &v.last_error {
                fs.push(f(&["quote", o, "err", e]));
            }
            d.push(o, fs, if hint && o == "backquote" { innate::FOLLOW_HINT } else { 0.0 });
        }
        let i = self.decide(d, ch)?;
        Some(i == 0)
    }

    pub(super) fn commit(&mut self, ch: &mut dyn Chooser) -> Option<Vec<String>> {
        let v = self.view;
        let rows = v.last_rows.clone().unwrap_or_default();
        let mut cands: Vec<(&str, Vec<String>)> = vec![("empty", vec![])];
        if !rows.is_empty() {
            cands.push(("first_col", rows.iter().filter_map(|r| r.first().cloned()).collect()));
            cands.push(("first_value", vec![rows[0].first().cloned().unwrap_or_default()]));
            if rows[0].len() > 1 {
                cands.push(("last_col", rows.iter().filter_map(|r| r.last().cloned()).collect()));
            }
        }
        let mut d = Decision { slot: "answer", labels: vec![], options: vec![], prior: vec![] };
        for (label, vals) in &cands {
            let mut fs = Vec::new();
            self.context_feats("answer", label, &mut fs);
            lexical(v, "answer", label, &mut fs);
            fs.push(f(&["answer", label, "n", &vals.len().min(3).to_string()]));
            d.push(label.to_string(), fs, 0.0);
        }
        let i = self.decide(d, ch)?;
        Some(cands[i].1.clone())
    }
}

/// Build one DBBench action from the view.
pub fn build(view: &DbView, ch: &mut dyn Chooser) -> Option<Built> {
    let mut b = Builder { view, decisions: Vec::new(), target: None, used: Vec::new() };
    let kind = b.kind(ch)?;
    let t = &view.table;
    let sql_call =
        |sql: String, b: Builder| Built { tool: "execute_sql".into(), arguments: serde_json::json!({"query": sql}), decisions: b.decisions };
    match kind.as_str() {
        "inspect" => {
            let q = b.quoting(&[t], ch)?;
            Some(sql_call(format!("SELECT * FROM {} LIMIT 5", ident(t, q)), b))
        }
        "commit" => {
            let answers = b.commit(ch)?;
            Some(Built { tool: "commit_final_answer".into(), arguments: serde_json::json!({"answers": answers}), decisions: b.decisions })
        }
        "query" => {
            let ops = ["select", "count", "count_distinct", "sum", "avg", "min", "max", "argmax", "argmin"];
            let mut d = Decision { slot: "op", labels: vec![], options: vec![], prior: vec![] };
            let q_lower = view.question.to_lowercase();
            let asks_which = view.q_tokens.first().map(|w| w == "which" || w == "what" || w == "name" || w == "give").unwrap_or(false);
            for o in ops {
                // Only features shared across operations: a weight per operation, or per
                // operation and question word, would only ever grow for the operations of the
                // training families and pull held-out questions towards them.
                let cls = op_class(o);
                let mut fs = vec![];
                lexical(view, "op", cls, &mut fs);
                let hits = op_lexicon(o).iter().filter(|w| q_lower.contains(*w)).count();
                if hits > 0 {
                    fs.push(f(&["op", "lexmatch"]));
                    fs.push(f(&["op", cls, "lexmatch"]));
                    if asks_which {
                        fs.push(f(&["op", cls, "lexmatch", "which"]));
                    }
                }
                let prior = asked_op_prior(&q_lower, o);
                if prior > 0.0 {
                    fs.push(f(&["op", "asked"]));
                    fs.push(f(&["op", cls, "asked"]));
                }
                if let Some(e) = &view.last_error {
                    fs.push(f(&["op", cls, "err", e]));
                }
                d.push(o, fs, prior);
            }
            let op = ops[b.decide(d, ch)?];
            let target = if op == "count" { None } else { Some(b.column("target", op, &[], ch)?) };
            b.target = target.clone();
            // an optional numeric comparison on another column
            let cmps = ["none", "gt", "lt", "ge", "le"];
            let has_number = view.spans.iter().any(|s| s.kind == SpanKind::Number);
            let cmp = if has_number {
                let mut d = Decision { slot: "cmp", labels: vec![], options: vec![], prior: vec![] };
                for c in cmps {
                    let mut fs = vec![f(&["cmp", c, "bias"]), f(&["cmp", c, "op", op_class(op)])];
                    lexical(view, "cmp", c, &mut fs);
                    d.push(c, fs, 0.0);
                }
                cmps[b.decide(d, ch)?]
            } else {
                "none"
            };
            let excl: Vec<&str> = target.iter().map(|s| s.as_str()).collect();
            let mut measure = None;
            let mut threshold = None;
            if cmp != "none" {
                let m = b.column("measure", op, &excl, ch)?;
                let others: Vec<&str> = view.columns.iter().filter(|c| **c != m).map(|s| s.as_str()).collect();
                threshold = b.filter("threshold", op, false, true, &others, ch)?.map(|(_, v)| v);
                b.used.extend(threshold.iter().cloned());
                measure = Some(m);
                threshold.as_ref()?;
            } else if op == "argmax" || op == "argmin" {
                measure = Some(b.column("measure", op, &excl, ch)?);
            }
            let w1 = b.filter("where", op, true, false, &[], ch)?;
            if let Some((_, v)) = &w1 {
                b.used.extend(filter_values(v).into_iter().map(str::to_string));
            }
            let w2 = match &w1 {
                Some((c, _)) => b.filter("where2", op, true, false, &[c.as_str()], ch)?,
                None => None,
            };
            let eqs: Vec<(String, String)> = w1.into_iter().chain(w2).collect();
            let trim = if eqs.is_empty() { false } else { b.match_mode(ch)? };
            let numeric_col = match op {
                "sum" | "avg" | "min" | "max" => target.clone(),
                _ => measure.clone(),
            };
            let conv = if numeric_col.is_some() { b.conversion(op, ch)? } else { "none".to_string() };
            let mut names: Vec<&str> = vec![t.as_str()];
            names.extend(target.iter().map(|s| s.as_str()));
            names.extend(measure.iter().map(|s| s.as_str()));
            names.extend(eqs.iter().map(|(c, _)| c.as_str()));
            let q = b.quoting(&names, ch)?;
            let unit = view.evidence.unit.clone().or(view.evidence.currency.clone());
            let num = |c: &str| numeric(c, &conv, unit.as_deref(), q);
            let mut wheres: Vec<String> = Vec::new();
            for (c, val) in &eqs {
                wheres.push(eq_sql(c, val, trim, q));
            }
            if let (Some(m), Some(th)) = (&measure, &threshold) {
                let sym = match cmp {
                    "gt" => ">",
                    "lt" => "<",
                    "ge" => ">=",
                    _ => "<=",
                };
                wheres.push(format!("{} {sym} {}", num(m), th.replace(',', "")));
            }
            let tgt = target.as_deref().unwrap_or("");
            let sel = match op {
                "count" => "COUNT(*)".to_string(),
                "count_distinct" => format!("COUNT(DISTINCT {})", ident(tgt, q)),
                "sum" | "avg" | "min" | "max" => format!("{}({})", op.to_uppercase(), num(tgt)),
                _ => ident(tgt, q),
            };
            let where_sql = if wheres.is_empty() { String::new() } else { format!(" WHERE {}", wheres.join(" AND ")) };
            let sql = if op == "argmax" || op == "argmin" {
                let m = num(measure.as_deref().unwrap_or(""));
                let agg = if op == "argmax" { "MAX" } else { "MIN" };
                // ties: every row sharing the best value
                let best = format!("(SELECT {agg}({m}) FROM {}{where_sql})", ident(t, q));
                let cond = if wheres.is_empty() { format!(" WHERE {m} = {best}") } else { format!("{where_sql} AND {m} = {best}") };
                format!("SELECT {} FROM {}{cond}", ident(tgt, q), ident(t, q))
            } else {
                format!("SELECT {sel} FROM {}{where_sql}", ident(t, q))
            };
            Some(sql_call(sql, b))
        }
        "insert" => {
            let vals = b.assign_values(ch)?;
            let mut names: Vec<&str> = vec![t.as_str()];
            names.extend(view.columns.iter().map(|s| s.as_str()));
            let q = b.quoting(&names, ch)?;
            let cols: Vec<String> = view.columns.iter().map(|c| ident(c, q)).collect();
            let lits: Vec<String> = vals.iter().map(|v| lit(v)).collect();
            Some(sql_call(format!("INSERT INTO {} ({}) VALUES ({})", ident(t, q), cols.join(", "), lits.join(", ")), b))
        }
        "update" => {
            let set = b.filter("set", "update", false, false, &[], ch)??;
            let filter = b.filter("where", "update", false, false, &[set.0.as_str()], ch)??;
            let trim = b.match_mode(ch)?;
            let q = b.quoting(&[t.as_str(), set.0.as_str(), filter.0.as_str()], ch)?;
            Some(sql_call(
                format!("UPDATE {} SET {} = {} WHERE {}", ident(t, q), ident(&set.0, q), lit(&set.1), eq_sql(&filter.0, &filter.1, trim, q)),
                b,
            ))
        }
        "delete" => {
            let filter = b.filter("where", "delete", false, false, &[], ch)??;
            let trim = b.match_mode(ch)?;
            let q = b.quoting(&[t.as_str(), filter.0.as_str()], ch)?;
            Some(sql_call(format!("DELETE FROM {} WHERE {}", ident(t, q), eq_sql(&filter.0, &filter.1, trim, q)), b))
        }
        _ => None,
    }
}
