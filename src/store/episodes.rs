//! Episodes: one row per finished episode, with summary columns for filtering and the whole
//! trajectory in its stored form (see `codec`).

use serde::{Deserialize, Serialize};

use crate::episode::{Episode, EpisodeStatus};

use super::sql::{args, now_utc, Arg, Conditions};
use super::trajectories::{Encoded, StoredTrajectory, TRAJECTORY_COLUMNS};
use super::{on_backend, Backend, BackendKind, Store, StoreError};

/// The experiment context of an episode; all optional (plain evaluations leave it empty).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
pub struct EpisodeContext {
    /// The experiment arm (e.g. a harness variant or training condition).
    pub arm: Option<String>,
    /// Which replicate seed of the experiment.
    pub seed_index: Option<u32>,
    /// The training iteration.
    pub iteration: Option<u32>,
    /// `train`, `rescue`, `probe`, `eval`, ...
    pub phase: Option<String>,
    /// `train` or `heldout`.
    pub split: Option<String>,
}

impl EpisodeContext {
    pub fn with_arm(mut self, arm: impl Into<String>) -> Self {
        self.arm = Some(arm.into());
        self
    }
    pub fn with_seed_index(mut self, seed_index: u32) -> Self {
        self.seed_index = Some(seed_index);
        self
    }
    pub fn with_iteration(mut self, iteration: u32) -> Self {
        self.iteration = Some(iteration);
        self
    }
    pub fn with_phase(mut self, phase: impl Into<String>) -> Self {
        self.phase = Some(phase.into());
        self
    }
    pub fn with_split(mut self, split: impl Into<String>) -> Self {
        self.split = Some(split.into());
        self
    }
}

/// Which episodes to list or count; every field given narrows the selection (AND), `None`
/// fields do not filter. Rows come in insertion order (`id` ascending).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EpisodeFilter {
    pub run_id: Option<i64>,
    pub task_id: Option<String>,
    pub suite: Option<String>,
    pub family: Option<String>,
    pub harness: Option<String>,
    pub policy: Option<String>,
    pub status: Option<EpisodeStatus>,
    pub success: Option<bool>,
    pub arm: Option<String>,
    pub seed_index: Option<u32>,
    pub iteration: Option<u32>,
    pub phase: Option<String>,
    pub split: Option<String>,
    /// A substring of `task_id` or of the trajectory's JSON text (`%` and `_` match literally).
    /// ASCII case-insensitive on both back-ends. Note that the trajectory is JSON: quotes and
    /// control characters in it are escaped. Matched by reading every trajectory the other
    /// fields select, so narrow by run first on a large store.
    pub text: Option<String>,
    /// At most this many rows ([`Store::episode_rows`] only).
    pub limit: Option<u32>,
    /// Skip this many rows first ([`Store::episode_rows`] only).
    pub offset: Option<u32>,
}

impl EpisodeFilter {
    /// All episodes of one run.
    pub fn run(run_id: i64) -> EpisodeFilter {
        EpisodeFilter { run_id: Some(run_id), ..Default::default() }
    }
}

/// A row of `episodes` without the trajectory.
/// Its JSON (the workbench's episode rows) carries the context's fields at the top level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct EpisodeRow {
    pub id: i64,
    pub run_id: i64,
    pub task_id: String,
    pub suite: String,
    pub family: String,
    pub harness: String,
    pub policy: String,
    pub sample: u32,
    pub seed: u64,
    #[ts(type = "\"completed\" | \"task_limit_reached\" | \"infra_error\" | \"cancelled\" | \"action_error\"")]
    pub status: EpisodeStatus,
    pub success: bool,
    /// `None` when the episode was not scored.
    pub reward: Option<f64>,
    pub infra_error: Option<String>,
    pub n_steps: u32,
    pub n_interventions: u32,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub duration_ms: f64,
    #[serde(flatten)]
    pub context: EpisodeContext,
    /// The trajectory schema version of the stored episode.
    pub schema: u32,
    pub created_at: String,
}

#[derive(sqlx::FromRow)]
struct RawEpisodeRow {
    id: i64,
    run_id: i64,
    task_id: String,
    suite: String,
    family: String,
    harness: String,
    policy: String,
    sample: i64,
    seed: i64,
    status: String,
    success: i64,
    reward: Option<f64>,
    infra_error: Option<String>,
    n_steps: i64,
    n_interventions: i64,
    prompt_tokens: i64,
    completion_tokens: i64,
    duration_ms: f64,
    arm: Option<String>,
    seed_index: Option<i64>,
    iteration: Option<i64>,
    phase: Option<String>,
    split: Option<String>,
    schema: i64,
    created_at: String,
}

#[derive(sqlx::FromRow)]
struct TextRow {
    task_id: String,
    id: i64,
    codec: i64,
    dictionary: Option<i64>,
    trajectory: Vec<u8>,
}

const ROW_COLUMNS: &str = "id, run_id, task_id, suite, family, harness, policy, sample, seed, status, success, \
     reward, infra_error, n_steps, n_interventions, prompt_tokens, completion_tokens, duration_ms, arm, seed_index, \
     iteration, phase, split, schema, created_at";

const INSERT_EPISODE: &str = "INSERT INTO episodes (run_id, task_id, suite, family, harness, policy, sample, seed, \
     status, success, reward, infra_error, n_steps, n_interventions, prompt_tokens, completion_tokens, duration_ms, \
     arm, seed_index, iteration, phase, split, schema, created_at, codec, dictionary, trajectory) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, \
     $23, $24, $25, $26, $27) RETURNING id";

fn saturating_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The conditions of a filter's fields, but for its text.
fn conditions(f: &EpisodeFilter) -> Conditions {
    let mut c = Conditions::default();
    c.eq("run_id", f.run_id);
    c.eq("task_id", f.task_id.clone());
    c.eq("suite", f.suite.clone());
    c.eq("family", f.family.clone());
    c.eq("harness", f.harness.clone());
    c.eq("policy", f.policy.clone());
    c.eq("status", f.status.map(EpisodeStatus::as_str));
    c.eq("success", f.success.map(i64::from));
    c.eq("arm", f.arm.clone());
    c.eq("seed_index", f.seed_index.map(i64::from));
    c.eq("iteration", f.iteration.map(i64::from));
    c.eq("phase", f.phase.clone());
    c.eq("split", f.split.clone());
    c
}

/// The bind values of [`INSERT_EPISODE`].
fn insert_args(run_id: i64, episode: &Episode, context: &EpisodeContext, trajectory: Encoded) -> Vec<Arg> {
    args![
        run_id,
        episode.task_id.as_str(),
        episode.suite.as_str(),
        episode.family.as_str(),
        episode.harness.as_str(),
        episode.policy.as_str(),
        i64::from(episode.sample),
        // Same bits; see the schema notes on `seed`.
        episode.seed as i64,
        episode.status.as_str(),
        i64::from(episode.success()),
        episode.score.as_ref().map(|s| s.reward),
        episode.infra_error.clone(),
        saturating_i64(episode.steps.len() as u64),
        saturating_i64(episode.interventions().count() as u64),
        saturating_i64(episode.prompt_tokens),
        saturating_i64(episode.completion_tokens),
        episode.duration_ms,
        context.arm.clone(),
        context.seed_index.map(i64::from),
        context.iteration.map(i64::from),
        context.phase.clone(),
        context.split.clone(),
        i64::from(episode.schema),
        now_utc(),
        trajectory.codec,
        trajectory.dictionary,
        trajectory.blob,
    ]
}

impl Store {
    /// Write one finished episode of run `run_id`; its id. The row is committed when this
    /// returns (one statement, its own transaction), so it survives the process being killed.
    pub async fn insert_episode(&self, run_id: i64, episode: &Episode, context: &EpisodeContext) -> Result<i64, StoreError> {
        if self.fence_for(run_id).is_some() {
            let ids = self.insert_episodes(run_id, &[(episode.clone(), context.clone())]).await?;
            return Ok(ids[0]);
        }
        let op = format!("insert episode {} into run {run_id}", episode.task_id);
        let trajectory = self.encode_episode(&op, episode).await?;
        let (id,): (i64,) = self.fetch_one(&op, INSERT_EPISODE, insert_args(run_id, episode, context, trajectory)).await?;
        Ok(id)
    }

    /// Write several finished episodes in one transaction (all or none); their ids, in order.
    pub async fn insert_episodes(&self, run_id: i64, episodes: &[(Episode, EpisodeContext)]) -> Result<Vec<i64>, StoreError> {
        let op = format!("insert {} episodes into run {run_id}", episodes.len());
        let mut all_args = Vec::with_capacity(episodes.len());
        for (episode, context) in episodes {
            let trajectory = self.encode_episode(&op, episode).await?;
            all_args.push(insert_args(run_id, episode, context, trajectory));
        }
        let fence = self.fence_for(run_id);
        let check = self.fence_check_sql();
        let result: Result<Result<Vec<i64>, super::lease::HeldBy>, sqlx::Error> = on_backend!(self, |pool, DB| {
            async {
                let mut tx = pool.begin().await?;
                let mut ids = Vec::with_capacity(all_args.len());
                for a in all_args {
                    let a = super::sql::arguments::<DB>(a)?;
                    let (id,): (i64,) = sqlx::query_as_with::<DB, (i64,), _>(INSERT_EPISODE, a).fetch_one(&mut *tx).await?;
                    ids.push(id);
                    crate::fault::point("store-write");
                }
                // a coordinator's episodes count only while it holds the run (see `lease`)
                if let Some(fence) = fence {
                    let holder: Option<(String,)> = sqlx::query_as::<DB, (String,)>(check).bind(run_id).fetch_optional(&mut *tx).await?;
                    if holder.as_ref().map(|(h,)| h.as_str()) != Some(fence.holder.as_str()) {
                        tx.rollback().await?;
                        return Ok(Err(super::lease::HeldBy(holder.map(|(h,)| h).unwrap_or_else(|| "nobody".into()))));
                    }
                }
                tx.commit().await?;
                Ok(Ok(ids))
            }
            .await
        });
        match result.map_err(|e| self.query_error(&op, e))? {
            Ok(ids) => Ok(ids),
            Err(super::lease::HeldBy(holder)) => Err(self.lease_lost(&op, run_id, &holder)),
        }
    }

    async fn encode_episode(&self, op: &str, episode: &Episode) -> Result<Encoded, StoreError> {
        let value = serde_json::to_value(episode).map_err(|e| self.json_error(op, e))?;
        self.encode_trajectory(op, &episode.suite, value).await
    }

    /// The stored episode (its trajectory, deserialised).
    pub async fn episode(&self, id: i64) -> Result<Option<Episode>, StoreError> {
        let op = format!("read episode {id}");
        let sql = format!("SELECT {TRAJECTORY_COLUMNS} FROM episodes WHERE id = $1");
        let row: Option<StoredTrajectory> = self.fetch_optional(&op, sqlx::AssertSqlSafe(sql), args![id]).await?;
        let Some(row) = row else { return Ok(None) };
        Ok(self.decode_trajectories(&op, vec![row]).await?.pop().map(|(_, e)| e))
    }

    /// The stored episode as JSON, read without building the [`Episode`]: exactly what
    /// serialising [`Store::episode`] gives for a trajectory of the current schema (steps
    /// delta-encoded, as stored), at a fraction of the cost for a long one (building an episode
    /// copies every step's whole context).
    pub async fn episode_json(&self, id: i64) -> Result<Option<serde_json::Value>, StoreError> {
        let op = format!("read episode {id}");
        let sql = format!("SELECT {TRAJECTORY_COLUMNS} FROM episodes WHERE id = $1");
        let row: Option<StoredTrajectory> = self.fetch_optional(&op, sqlx::AssertSqlSafe(sql), args![id]).await?;
        let Some(row) = row else { return Ok(None) };
        Ok(self.decode_trajectories(&op, vec![row]).await?.pop().map(|(_, v)| v))
    }

    /// The summary row of one episode, if present.
    pub async fn episode_row(&self, id: i64) -> Result<Option<EpisodeRow>, StoreError> {
        let op = "read episode row";
        let sql = format!("SELECT {ROW_COLUMNS} FROM episodes WHERE id = $1");
        let raw: Option<RawEpisodeRow> = self.fetch_optional(op, sqlx::AssertSqlSafe(sql), args![id]).await?;
        raw.map(|r| self.episode_row_from(op, r)).transpose()
    }

    /// Summary rows (no trajectories) of the episodes the filter selects, in insertion order.
    pub async fn episode_rows(&self, filter: &EpisodeFilter) -> Result<Vec<EpisodeRow>, StoreError> {
        let op = "list episodes";
        let (sql, args) = self.select_sql(ROW_COLUMNS, filter, true).await?;
        let raw: Vec<RawEpisodeRow> = self.fetch_all(op, sqlx::AssertSqlSafe(sql), args).await?;
        raw.into_iter().map(|r| self.episode_row_from(op, r)).collect()
    }

    /// One page of the filter's summary rows (its `limit` and `offset`) and how many rows the
    /// filter selects in all. With a text filter the trajectories are searched once for both.
    pub async fn episode_page(&self, filter: &EpisodeFilter) -> Result<(u64, Vec<EpisodeRow>), StoreError> {
        let Some(text) = &filter.text else {
            return Ok((self.count_episodes(filter).await?, self.episode_rows(filter).await?));
        };
        let op = "list episodes";
        let ids = self.ids_with_text(&conditions(filter), text).await?;
        let offset = filter.offset.unwrap_or(0) as usize;
        let end = filter.limit.map_or(ids.len(), |l| offset.saturating_add(l as usize).min(ids.len()));
        let page = ids.get(offset..end).unwrap_or_default();
        let mut rows = Vec::with_capacity(page.len());
        for chunk in page.chunks(500) {
            let mut c = Conditions::default();
            c.is_in("id", chunk.iter().copied());
            let sql = format!("SELECT {ROW_COLUMNS} FROM episodes{} ORDER BY id", c.where_sql());
            let raw: Vec<RawEpisodeRow> = self.fetch_all(op, sqlx::AssertSqlSafe(sql), c.args).await?;
            for r in raw {
                rows.push(self.episode_row_from(op, r)?);
            }
        }
        Ok((ids.len() as u64, rows))
    }

    /// Summary rows of one run's episodes in any of `phases`, in insertion order.
    pub async fn episode_rows_in_phases(&self, run_id: i64, phases: &[&str]) -> Result<Vec<EpisodeRow>, StoreError> {
        let op = format!("list episodes of run {run_id} in phases {}", phases.join(", "));
        let mut c = Conditions::default();
        c.eq("run_id", Some(run_id));
        c.is_in("phase", phases.iter().copied());
        let sql = format!("SELECT {ROW_COLUMNS} FROM episodes{} ORDER BY id", c.where_sql());
        let raw: Vec<RawEpisodeRow> = self.fetch_all(&op, sqlx::AssertSqlSafe(sql), c.args).await?;
        raw.into_iter().map(|r| self.episode_row_from(&op, r)).collect()
    }

    /// The trajectories the filter's fields select (its text, limit and offset ignored), only
    /// those with the given ids if `ids` is set, read as `T`: a view of an episode's JSON that
    /// leaves out what it does not need. In insertion order.
    pub async fn trajectory_views<T: serde::de::DeserializeOwned>(
        &self,
        filter: &EpisodeFilter,
        ids: Option<&[i64]>,
    ) -> Result<Vec<(i64, T)>, StoreError> {
        let op = "read trajectories";
        let mut c = conditions(filter);
        if let Some(ids) = ids {
            c.is_in("id", ids.iter().copied());
        }
        let sql = format!("SELECT {TRAJECTORY_COLUMNS} FROM episodes{} ORDER BY id", c.where_sql());
        let raw: Vec<StoredTrajectory> = self.fetch_all(op, sqlx::AssertSqlSafe(sql), c.args).await?;
        self.decode_trajectories(op, raw).await
    }

    /// Full episodes the filter selects, with their ids, in insertion order.
    pub async fn episodes(&self, filter: &EpisodeFilter) -> Result<Vec<(i64, Episode)>, StoreError> {
        let op = "read episodes";
        let (sql, args) = self.select_sql(TRAJECTORY_COLUMNS, filter, true).await?;
        let raw: Vec<StoredTrajectory> = self.fetch_all(op, sqlx::AssertSqlSafe(sql), args).await?;
        self.decode_trajectories(op, raw).await
    }

    /// Delete the episodes of one experiment job (suite, arm, seed index) from `iteration` on:
    /// what an interrupted iteration recorded before a resume replays it. Returns how many.
    pub async fn delete_episodes_from(&self, run_id: i64, suite: &str, arm: &str, seed_index: u32, iteration: u32) -> Result<u64, StoreError> {
        let op = format!("delete episodes of run {run_id} ({suite}/{arm}/{seed_index}) from iteration {iteration}");
        self.execute(
            &op,
            "DELETE FROM episodes WHERE run_id = $1 AND suite = $2 AND arm = $3 AND seed_index = $4 AND iteration >= $5",
            args![run_id, suite, arm, i64::from(seed_index), i64::from(iteration)],
        )
        .await
    }

    /// How many episodes the filter selects (`limit` and `offset` ignored).
    pub async fn count_episodes(&self, filter: &EpisodeFilter) -> Result<u64, StoreError> {
        let op = "count episodes";
        let (sql, args) = self.select_sql("COUNT(*)", filter, false).await?;
        let (n,): (i64,) = self.fetch_one(op, sqlx::AssertSqlSafe(sql), args).await?;
        u64::try_from(n).map_err(|_| self.corrupt(op, format!("negative count {n}")))
    }

    /// The statement selecting `columns` of the episodes `f` selects. A text filter is matched
    /// here, against the decoded trajectories (they are stored compressed), and becomes a list
    /// of ids.
    async fn select_sql(&self, columns: &str, f: &EpisodeFilter, paged: bool) -> Result<(String, Vec<Arg>), StoreError> {
        let mut c = conditions(f);
        if let Some(text) = &f.text {
            let ids = self.ids_with_text(&c, text).await?;
            if ids.is_empty() {
                c.push("0 = 1".into());
            } else {
                // ids are integers read from the store: safe to write into the statement
                let list: Vec<String> = ids.iter().map(i64::to_string).collect();
                c.push(format!("id IN ({})", list.join(", ")));
            }
        }
        let mut sql = format!("SELECT {columns} FROM episodes{}", c.where_sql());
        if paged {
            sql.push_str(" ORDER BY id");
            match (f.limit, f.offset) {
                (Some(limit), offset) => {
                    let l = c.bind(i64::from(limit));
                    let o = c.bind(i64::from(offset.unwrap_or(0)));
                    sql.push_str(&format!(" LIMIT {l} OFFSET {o}"));
                }
                (None, Some(offset)) => {
                    let o = c.bind(i64::from(offset));
                    // SQLite needs a LIMIT before OFFSET; -1 means none.
                    match self.backend() {
                        BackendKind::Sqlite => sql.push_str(&format!(" LIMIT -1 OFFSET {o}")),
                        BackendKind::Postgres => sql.push_str(&format!(" OFFSET {o}")),
                    }
                }
                (None, None) => {}
            }
        }
        Ok((sql, c.args))
    }

    /// The ids of the episodes the conditions select whose task id or trajectory holds `text`,
    /// read a page of rows at a time.
    async fn ids_with_text(&self, c: &Conditions, text: &str) -> Result<Vec<i64>, StoreError> {
        const PAGE: i64 = 5_000;
        let op = "search episodes";
        let needle = text.to_ascii_lowercase();
        let finder = memchr::memmem::Finder::new(needle.as_bytes());
        let strings = self.strings_containing(op, &finder).await?;
        let mut out = Vec::new();
        let mut after = i64::MIN;
        loop {
            let mut page = Conditions { clauses: c.clauses.clone(), args: c.args.clone() };
            let a = page.bind(after);
            page.push(format!("id > {a}"));
            let l = page.bind(PAGE);
            let sql = format!("SELECT task_id, {TRAJECTORY_COLUMNS} FROM episodes{} ORDER BY id LIMIT {l}", page.where_sql());
            let rows: Vec<TextRow> = self.fetch_all(op, sqlx::AssertSqlSafe(sql), page.args).await?;
            let Some(last) = rows.last().map(|r| r.id) else { break };
            let n = rows.len() as i64;
            let rows = rows
                .into_iter()
                .map(|r| (r.task_id, StoredTrajectory { id: r.id, codec: r.codec, dictionary: r.dictionary, trajectory: r.trajectory }))
                .collect();
            out.extend(self.matching_text(op, rows, &finder, &strings).await?);
            if n < PAGE {
                break;
            }
            after = last;
        }
        Ok(out)
    }

    fn episode_row_from(&self, op: &str, r: RawEpisodeRow) -> Result<EpisodeRow, StoreError> {
        let id = r.id;
        let bad = |what: &str, v: i64| self.corrupt(op, format!("episode {id}: {what} out of range: {v}"));
        let u32_of = |what: &str, v: i64| u32::try_from(v).map_err(|_| bad(what, v));
        let u64_of = |what: &str, v: i64| u64::try_from(v).map_err(|_| bad(what, v));
        let status = EpisodeStatus::parse(&r.status).ok_or_else(|| self.corrupt(op, format!("episode {id}: unknown status `{}`", r.status)))?;
        Ok(EpisodeRow {
            id,
            run_id: r.run_id,
            task_id: r.task_id,
            suite: r.suite,
            family: r.family,
            harness: r.harness,
            policy: r.policy,
            sample: u32_of("sample", r.sample)?,
            seed: r.seed as u64,
            status,
            success: r.success != 0,
            reward: r.reward,
            infra_error: r.infra_error,
            n_steps: u32_of("n_steps", r.n_steps)?,
            n_interventions: u32_of("n_interventions", r.n_interventions)?,
            prompt_tokens: u64_of("prompt_tokens", r.prompt_tokens)?,
            completion_tokens: u64_of("completion_tokens", r.completion_tokens)?,
            duration_ms: r.duration_ms,
            context: EpisodeContext {
                arm: r.arm,
                seed_index: r.seed_index.map(|v| u32_of("seed_index", v)).transpose()?,
                iteration: r.iteration.map(|v| u32_of("iteration", v)).transpose()?,
                phase: r.phase,
                split: r.split,
            },
            schema: u32_of("schema", r.schema)?,
            created_at: r.created_at,
        })
    }
}
