//! The launch templates of `deploy/`: the Slurm scripts are valid bash and start workers and a
//! distributed coordinator, the Kubernetes manifests have what a cluster needs (the store's URL
//! from a Secret, resources, a sandbox-capable security context, the coordinator as a Job whose
//! experiment file parses), the systemd units have their sections and none of the hardening
//! options that break bubblewrap, and no template holds a database credential.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use harness_s::experiment::ExperimentConfig;
use yaml_rust2::{Yaml, YamlLoader};

fn deploy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy")
}

/// The files of `deploy/<sub>` whose names end with one of `suffixes`, sorted.
fn files(sub: &str, suffixes: &[&str]) -> Vec<PathBuf> {
    let dir = deploy_dir().join(sub);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && suffixes.iter().any(|s| p.to_string_lossy().ends_with(s)))
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no {suffixes:?} file in {}", dir.display());
    out
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

// ---------------------------------------------------------------------------------------------
// Shell scripts

/// The commands of a shell script, one per logical line (backslash continuations joined,
/// comment lines dropped), as whitespace-separated words with their quotes removed.
fn commands(script: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in script.lines() {
        let t = line.trim();
        if t.starts_with('#') && current.is_empty() {
            continue;
        }
        match t.strip_suffix('\\') {
            Some(head) => {
                current.push_str(head);
                current.push(' ');
            }
            None => {
                current.push_str(t);
                let words: Vec<String> = current.split_whitespace().map(|w| w.trim_matches(|c| c == '"' || c == '\'').to_string()).collect();
                if !words.is_empty() {
                    out.push(words);
                }
                current.clear();
            }
        }
    }
    out
}

/// The first command that has `seq` as consecutive words.
fn find_command<'a>(commands: &'a [Vec<String>], seq: &[&str]) -> Option<&'a Vec<String>> {
    commands.iter().find(|c| c.windows(seq.len()).any(|w| w.iter().zip(seq).all(|(a, b)| a == b)))
}

#[test]
fn slurm_scripts_are_valid_bash_and_start_workers_and_a_distributed_coordinator() {
    let scripts = files("slurm", &[".sbatch", ".sh"]);
    let mut cmds: Vec<Vec<String>> = Vec::new();
    for path in &scripts {
        let text = read(path);
        assert!(text.starts_with("#!/bin/bash\n"), "{}: starts with #!/bin/bash", name(path));
        let out = Command::new("bash").arg("-n").arg(path).output().expect("bash runs");
        assert!(out.status.success(), "bash -n {}: {}", name(path), String::from_utf8_lossy(&out.stderr));
        if name(path).ends_with(".sbatch") {
            assert!(text.lines().any(|l| l.starts_with("#SBATCH ")), "{}: no #SBATCH directive", name(path));
        }
        let script_cmds = commands(&text);
        // The store's URL comes from the environment or a private file, never from the script.
        for c in &script_cmds {
            for w in c {
                if let Some(v) = w.split_once("HARNESS_S_DB=").map(|(_, v)| v.trim_matches(|c| c == '"' || c == '\'')) {
                    assert!(!v.starts_with("postgres"), "{}: HARNESS_S_DB is set to a literal URL: {}", name(path), c.join(" "));
                }
            }
        }
        cmds.extend(script_cmds);
    }

    let worker = find_command(&cmds, &["harness-s", "worker"]).expect("a script runs `harness-s worker`");
    assert!(worker.iter().any(|w| w == "--slots"), "the worker is given --slots: {}", worker.join(" "));
    let array = scripts.iter().any(|p| read(p).lines().any(|l| l.starts_with("#SBATCH --array")))
        || cmds.iter().any(|c| c.first().is_some_and(|w| w == "sbatch") && c.iter().any(|w| w.starts_with("--array")));
    assert!(array, "the workers are a job array");

    let coordinator = find_command(&cmds, &["harness-s", "experiment", "run"]).expect("a script runs `harness-s experiment run`");
    assert!(coordinator.iter().any(|w| w == "--distributed"), "the coordinator runs --distributed: {}", coordinator.join(" "));

    // The workers end with the experiment: they exit when idle, or the coordinator cancels them.
    let idle_exit = worker.iter().any(|w| w == "--exit-after-idle");
    let cancelled = cmds.iter().any(|c| c.first().is_some_and(|w| w == "scancel"));
    assert!(idle_exit || cancelled, "workers neither exit when idle nor get cancelled by the coordinator");
}

// ---------------------------------------------------------------------------------------------
// Credentials

/// Every `postgres://` or `postgresql://` URL in `text` that carries a password
/// (`scheme://user:password@...`).
fn urls_with_password(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for scheme in ["postgres://", "postgresql://"] {
        for (at, _) in text.match_indices(scheme) {
            let rest = &text[at + scheme.len()..];
            let end = rest.find(|c: char| c.is_whitespace() || "\"'`<>)".contains(c)).unwrap_or(rest.len());
            let authority = rest[..end].split('/').next().unwrap_or("");
            if let Some((userinfo, _)) = authority.rsplit_once('@') {
                if userinfo.contains(':') {
                    found.push(text[at..at + scheme.len() + end].to_string());
                }
            }
        }
    }
    found
}

#[test]
fn the_credential_check_recognises_a_url_with_a_password() {
    assert_eq!(urls_with_password("HARNESS_S_DB=postgres://user:password@db:5432/h"), ["postgres://user:password@db:5432/h"]);
    assert_eq!(urls_with_password("x 'postgresql://a:b@h/d' y"), ["postgresql://a:b@h/d"]);
    assert!(urls_with_password("postgres://HOST:5432/DATABASE and postgres://... and postgres://* |").is_empty());
}

#[test]
fn no_template_holds_a_database_credential() {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut all = Vec::new();
    walk(&deploy_dir(), &mut all);
    assert!(all.len() >= 5, "deploy/ holds the templates");
    for path in all {
        let found = urls_with_password(&read(&path));
        assert!(found.is_empty(), "{}: a database credential: {found:?}", path.display());
    }
}

// ---------------------------------------------------------------------------------------------
// Kubernetes

fn s(y: &Yaml) -> Option<&str> {
    y.as_str()
}

/// The strings of a YAML list (empty when absent).
fn strings(y: &Yaml) -> Vec<String> {
    y.as_vec().map(|v| v.iter().filter_map(|x| x.as_str().map(str::to_string)).collect()).unwrap_or_default()
}

fn list(y: &Yaml) -> &[Yaml] {
    y.as_vec().map(Vec::as_slice).unwrap_or(&[])
}

/// A manifest document and where it came from.
struct Doc {
    file: String,
    yaml: Yaml,
}

impl Doc {
    fn kind(&self) -> &str {
        s(&self.yaml["kind"]).unwrap_or("")
    }
    fn name(&self) -> &str {
        s(&self.yaml["metadata"]["name"]).unwrap_or("")
    }
    fn what(&self) -> String {
        format!("{}: {} {}", self.file, self.kind(), self.name())
    }
}

fn manifests() -> Vec<Doc> {
    let mut docs = Vec::new();
    for path in files("kubernetes", &[".yaml", ".yml"]) {
        let text = read(&path);
        let parsed = YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{}: not YAML: {e}", name(&path)));
        for yaml in parsed.into_iter().filter(|y| !y.is_null()) {
            docs.push(Doc { file: name(&path), yaml });
        }
    }
    docs
}

/// Problems with the manifest set; empty when it has what a cluster needs.
fn kubernetes_problems(docs: &[Doc]) -> Vec<String> {
    let mut p = Vec::new();
    for d in docs {
        for (key, v) in [("apiVersion", &d.yaml["apiVersion"]), ("kind", &d.yaml["kind"]), ("metadata.name", &d.yaml["metadata"]["name"])] {
            if s(v).is_none_or(str::is_empty) {
                p.push(format!("{}: a document without {key}", d.file));
            }
        }
    }
    let of_kind = |k: &'static str| docs.iter().filter(move |d| d.kind() == k);
    let secret_keys: Vec<(String, String)> = of_kind("Secret")
        .flat_map(|d| {
            let keys: Vec<String> = ["stringData", "data"]
                .iter()
                .flat_map(|f| d.yaml[*f].as_hash().into_iter().flat_map(|h| h.keys().filter_map(|k| s(k).map(str::to_string))))
                .collect();
            keys.into_iter().map(|k| (d.name().to_string(), k))
        })
        .collect();
    let config_maps: BTreeMap<&str, &Yaml> = of_kind("ConfigMap").map(|d| (d.name(), &d.yaml["data"])).collect();
    let claims: Vec<&str> = of_kind("PersistentVolumeClaim").map(Doc::name).collect();

    let mut workers = 0;
    let mut coordinators = 0;
    for d in docs.iter().filter(|d| ["Deployment", "Job", "StatefulSet", "DaemonSet"].contains(&d.kind())) {
        let pod = &d.yaml["spec"]["template"]["spec"];
        let containers = list(&pod["containers"]);
        if containers.is_empty() {
            p.push(format!("{}: no containers", d.what()));
        }
        let volumes = list(&pod["volumes"]);
        for v in volumes {
            if let Some(cm) = s(&v["configMap"]["name"]) {
                if !config_maps.contains_key(cm) {
                    p.push(format!("{}: volume from ConfigMap {cm}, which the set does not have", d.what()));
                }
            }
            if let Some(claim) = s(&v["persistentVolumeClaim"]["claimName"]) {
                if !claims.contains(&claim) {
                    p.push(format!("{}: volume from claim {claim}, which the set does not have", d.what()));
                }
            }
        }
        for c in containers {
            let argv: Vec<String> = strings(&c["command"]).into_iter().chain(strings(&c["args"])).collect();
            let is_worker = argv.iter().any(|a| a == "worker");
            let is_coordinator = argv.iter().any(|a| a == "experiment");
            if !is_worker && !is_coordinator {
                continue;
            }
            let what = format!("{} container {}", d.what(), s(&c["name"]).unwrap_or("?"));
            if !strings(&c["args"]).iter().any(|a| a == "worker" || a == "experiment") {
                p.push(format!("{what}: the subcommand is not in args: {argv:?}"));
            }
            if s(&c["image"]).is_none_or(str::is_empty) {
                p.push(format!("{what}: no image"));
            }
            // The store's URL comes from a Secret of the set, never a literal value.
            let db = list(&c["env"]).iter().find(|e| s(&e["name"]) == Some("HARNESS_S_DB"));
            match db.map(|e| (&e["value"], &e["valueFrom"]["secretKeyRef"])) {
                None => p.push(format!("{what}: no HARNESS_S_DB in env")),
                Some((value, _)) if !value.is_badvalue() => p.push(format!("{what}: HARNESS_S_DB has a literal value")),
                Some((_, r)) => match (s(&r["name"]), s(&r["key"])) {
                    (Some(n), Some(k)) if secret_keys.iter().any(|(sn, sk)| sn == n && sk == k) => {}
                    (Some(n), Some(k)) => p.push(format!("{what}: HARNESS_S_DB from secret {n} key {k}, which no Secret of the set has")),
                    _ => p.push(format!("{what}: HARNESS_S_DB does not come from a secretKeyRef")),
                },
            }
            for (key, v) in [
                ("resources.requests.cpu", &c["resources"]["requests"]["cpu"]),
                ("resources.requests.memory", &c["resources"]["requests"]["memory"]),
                ("resources.limits.memory", &c["resources"]["limits"]["memory"]),
            ] {
                if v.is_badvalue() || v.is_null() {
                    p.push(format!("{what}: no {key}"));
                }
            }
            // The sandbox needs user namespaces, not privileges.
            let sc = &c["securityContext"];
            if sc["privileged"].as_bool() == Some(true) {
                p.push(format!("{what}: privileged"));
            }
            if sc["allowPrivilegeEscalation"].as_bool() != Some(false) {
                p.push(format!("{what}: allowPrivilegeEscalation is not false"));
            }
            if !list(&sc["capabilities"]["add"]).is_empty() {
                p.push(format!("{what}: adds capabilities"));
            }
            if !strings(&sc["capabilities"]["drop"]).iter().any(|c| c == "ALL") {
                p.push(format!("{what}: does not drop ALL capabilities"));
            }
            if is_worker {
                workers += 1;
                if !argv.iter().any(|a| a == "--slots") {
                    p.push(format!("{what}: no --slots"));
                }
                // bubblewrap mounts a fresh /proc and calls mount(2) in its own namespaces.
                if s(&sc["procMount"]) != Some("Unmasked") {
                    p.push(format!("{what}: procMount is not Unmasked"));
                }
                if pod["hostUsers"].as_bool() != Some(false) {
                    p.push(format!("{what}: hostUsers is not false (procMount Unmasked needs it)"));
                }
                let seccomp = s(&pod["securityContext"]["seccompProfile"]["type"]).or(s(&sc["seccompProfile"]["type"]));
                if !matches!(seccomp, Some("Unconfined" | "Localhost")) {
                    p.push(format!("{what}: seccompProfile {seccomp:?} refuses bubblewrap's mounts (Unconfined or Localhost)"));
                }
            }
            if is_coordinator {
                coordinators += 1;
                if d.kind() != "Job" {
                    p.push(format!("{what}: the coordinator is not a Job"));
                }
                for w in ["run", "--distributed"] {
                    if !argv.iter().any(|a| a == w) {
                        p.push(format!("{what}: `{w}` missing from {argv:?}"));
                    }
                }
                if !matches!(s(&pod["restartPolicy"]), Some("Never" | "OnFailure")) {
                    p.push(format!("{what}: restartPolicy {:?} (a Job's is Never or OnFailure)", s(&pod["restartPolicy"])));
                }
                // The experiment file is a ConfigMap key mounted into the coordinator, and parses.
                let file = argv.iter().skip_while(|a| *a != "run").nth(1).cloned().unwrap_or_default();
                let mount = list(&c["volumeMounts"]).iter().find_map(|m| {
                    let at = s(&m["mountPath"])?.trim_end_matches('/');
                    let key = file.strip_prefix(at)?.strip_prefix('/')?;
                    let volume = volumes.iter().find(|v| s(&v["name"]) == s(&m["name"]))?;
                    Some((s(&volume["configMap"]["name"])?, key.to_string()))
                });
                match mount.and_then(|(cm, key)| Some((config_maps.get(cm)?[key.as_str()].as_str()?, key))) {
                    None => p.push(format!("{what}: the experiment file {file} is not a key of a ConfigMap mounted there")),
                    Some((text, key)) => {
                        if let Err(e) = ExperimentConfig::parse(&key, text) {
                            p.push(format!("{what}: the experiment file does not parse: {e}"));
                        }
                    }
                }
            }
        }
    }
    if workers == 0 {
        p.push("no workload runs `harness-s worker`".into());
    }
    if coordinators == 0 {
        p.push("no Job runs `harness-s experiment run ... --distributed`".into());
    }
    if of_kind("Secret").next().is_none() {
        p.push("no Secret template for HARNESS_S_DB".into());
    }
    p
}

#[test]
fn kubernetes_manifests_have_what_a_cluster_needs() {
    let docs = manifests();
    let problems = kubernetes_problems(&docs);
    assert!(problems.is_empty(), "deploy/kubernetes:\n  {}", problems.join("\n  "));
    for d in &docs {
        if let Some(image) = s(&d.yaml["spec"]["template"]["spec"]["containers"][0]["image"]) {
            assert!(image.contains("your-org"), "{}: the image stays a placeholder ({image})", d.what());
        }
    }
}

/// The node at `path` of a YAML tree, to change it.
fn at<'a>(y: &'a mut Yaml, path: &[&str]) -> Option<&'a mut Yaml> {
    let mut node = y;
    for key in path {
        match node {
            Yaml::Hash(h) => node = h.get_mut(&Yaml::String((*key).into()))?,
            _ => return None,
        }
    }
    Some(node)
}

#[test]
fn the_kubernetes_check_catches_a_missing_field() {
    let docs = manifests();
    // `path` names a map in every document that has it; `key` is removed from it.
    let without = |path: &[&str], key: &str| -> Vec<String> {
        let mut copy: Vec<Doc> = docs.iter().map(|d| Doc { file: d.file.clone(), yaml: d.yaml.clone() }).collect();
        for d in copy.iter_mut() {
            let node = match path.split_last() {
                Some((&"containers", parent)) => match at(&mut d.yaml, parent).and_then(|p| at(p, &["containers"])) {
                    Some(Yaml::Array(cs)) => cs.first_mut(),
                    _ => None,
                },
                _ => at(&mut d.yaml, path),
            };
            if let Some(Yaml::Hash(h)) = node {
                h.remove(&Yaml::String(key.into()));
            }
        }
        kubernetes_problems(&copy)
    };
    assert!(kubernetes_problems(&docs).is_empty());
    let pod = ["spec", "template", "spec"];
    let container = ["spec", "template", "spec", "containers"];
    assert!(!without(&[], "apiVersion").is_empty());
    assert!(!without(&["metadata"], "name").is_empty());
    assert!(!without(&container, "resources").is_empty());
    assert!(!without(&container, "env").is_empty());
    assert!(!without(&container, "args").is_empty());
    assert!(!without(&container, "securityContext").is_empty());
    assert!(!without(&pod, "restartPolicy").is_empty());
    assert!(!without(&pod, "hostUsers").is_empty());
    assert!(!without(&["stringData"], "HARNESS_S_DB").is_empty());
}

// ---------------------------------------------------------------------------------------------
// systemd

/// A unit file's sections in order, each with its `key=value` lines (continuations joined).
fn unit_sections(text: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut sections: Vec<(String, Vec<(String, String)>)> = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let t = line.trim();
        if pending.is_empty() && (t.is_empty() || t.starts_with('#') || t.starts_with(';')) {
            continue;
        }
        if let Some(head) = t.strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
            continue;
        }
        let full = std::mem::take(&mut pending) + t;
        if full.starts_with('[') && full.ends_with(']') {
            sections.push((full[1..full.len() - 1].to_string(), Vec::new()));
        } else if let Some((k, v)) = full.split_once('=') {
            let section = sections.last_mut().unwrap_or_else(|| panic!("`{full}` before any section"));
            section.1.push((k.trim().to_string(), v.trim().to_string()));
        } else {
            panic!("not a unit file line: `{full}`");
        }
    }
    sections
}

fn value<'a>(sections: &'a [(String, Vec<(String, String)>)], section: &str, key: &str) -> Option<&'a str> {
    sections.iter().filter(|(n, _)| n == section).flat_map(|(_, kv)| kv.iter()).filter(|(k, _)| k == key).map(|(_, v)| v.as_str()).next_back()
}

/// A systemd time span (`900`, `15min`, `1h 30s`) in seconds.
fn seconds(span: &str) -> u64 {
    let mut total = 0;
    let mut number = String::new();
    let mut unit = String::new();
    let mut flush = |number: &mut String, unit: &mut String| {
        if !number.is_empty() {
            let n: u64 = number.parse().unwrap();
            total += n * match unit.as_str() {
                "" | "s" | "sec" | "second" | "seconds" => 1,
                "m" | "min" | "minute" | "minutes" => 60,
                "h" | "hr" | "hour" | "hours" => 3600,
                other => panic!("time unit `{other}`"),
            };
        }
        number.clear();
        unit.clear();
    };
    for ch in span.chars() {
        if ch.is_ascii_digit() {
            if !unit.is_empty() {
                flush(&mut number, &mut unit);
            }
            number.push(ch);
        } else if !ch.is_whitespace() {
            unit.push(ch);
        }
    }
    flush(&mut number, &mut unit);
    total
}

/// Problems with one unit; empty when it is a sound worker or coordinator unit.
fn unit_problems(file: &str, text: &str) -> Vec<String> {
    let mut p = Vec::new();
    let sections = unit_sections(text);
    for name in ["Unit", "Service", "Install"] {
        if !sections.iter().any(|(n, _)| n == name) {
            p.push(format!("{file}: no [{name}]"));
        }
    }
    if value(&sections, "Install", "WantedBy").is_none() {
        p.push(format!("{file}: [Install] has no WantedBy"));
    }
    let exec: Vec<&str> = value(&sections, "Service", "ExecStart").unwrap_or("").split_whitespace().collect();
    let program = exec.first().copied().unwrap_or("");
    if !program.ends_with("/harness-s") {
        p.push(format!("{file}: ExecStart does not run harness-s: {exec:?}"));
    }
    let worker = exec.get(1) == Some(&"worker");
    let coordinator = exec.get(1..3) == Some(&["experiment", "run"][..]);
    if file.contains("worker") && !worker {
        p.push(format!("{file}: ExecStart is not `harness-s worker ...`: {exec:?}"));
    }
    if worker && !exec.contains(&"--slots") {
        p.push(format!("{file}: the worker is not given --slots"));
    }
    if file.contains("coordinator") && !(coordinator && exec.contains(&"--distributed")) {
        p.push(format!("{file}: ExecStart is not `harness-s experiment run FILE --distributed`: {exec:?}"));
    }
    if value(&sections, "Service", "EnvironmentFile").is_none() {
        p.push(format!("{file}: no EnvironmentFile (HARNESS_S_DB)"));
    }
    if text.lines().any(|l| l.trim_start().starts_with("Environment=") && l.contains("postgres")) {
        p.push(format!("{file}: the store's URL is written in the unit"));
    }
    if value(&sections, "Service", "Restart") != Some("on-failure") {
        p.push(format!("{file}: Restart is not on-failure"));
    }
    if worker {
        if value(&sections, "Service", "KillSignal") != Some("SIGTERM") {
            p.push(format!("{file}: KillSignal is not SIGTERM"));
        }
        if value(&sections, "Service", "KillMode") != Some("mixed") {
            p.push(format!("{file}: KillMode is not mixed (SIGTERM would reach the sandboxes too)"));
        }
        let stop = value(&sections, "Service", "TimeoutStopSec").map(seconds).unwrap_or(0);
        if stop < 300 {
            p.push(format!("{file}: TimeoutStopSec {stop} s leaves an episode no time to end"));
        }
    }
    // Hardening options that break bubblewrap.
    let truthy = |v: &str| !matches!(v, "no" | "false" | "0" | "off" | "");
    for key in [
        "PrivateUsers",
        "RestrictNamespaces",
        "ProtectKernelTunables",
        "ProtectKernelLogs",
        "ProtectHostname",
        "ProtectProc",
        "ProcSubset",
        "PrivateNetwork",
    ] {
        if let Some(v) = value(&sections, "Service", key) {
            if truthy(v) && !(key == "ProtectProc" && v == "default") && !(key == "ProcSubset" && v == "all") {
                p.push(format!("{file}: {key}={v} breaks the bubblewrap sandbox"));
            }
        }
    }
    if let Some(v) = value(&sections, "Service", "SystemCallFilter") {
        if !v.contains("@mount") {
            p.push(format!("{file}: SystemCallFilter={v} refuses bubblewrap's mounts"));
        }
    }
    if let Some(v) = value(&sections, "Service", "RestrictAddressFamilies") {
        if !v.contains("AF_NETLINK") {
            p.push(format!("{file}: RestrictAddressFamilies={v} refuses bubblewrap's netlink socket"));
        }
    }
    p
}

#[test]
fn systemd_units_have_their_sections_and_keep_bubblewrap_working() {
    let units = files("systemd", &[".service"]);
    assert!(units.iter().any(|u| name(u) == "harness-s-worker.service"), "deploy/systemd/harness-s-worker.service");
    for path in &units {
        let problems = unit_problems(&name(path), &read(path));
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }
}

#[test]
fn the_systemd_check_catches_a_missing_or_harmful_line() {
    let path = deploy_dir().join("systemd/harness-s-worker.service");
    let text = read(&path);
    let without = |prefix: &str| text.lines().filter(|l| !l.starts_with(prefix)).collect::<Vec<_>>().join("\n");
    for prefix in ["[Install]", "ExecStart=", "EnvironmentFile=", "Restart=", "TimeoutStopSec="] {
        assert!(!unit_problems("harness-s-worker.service", &without(prefix)).is_empty(), "removing {prefix} goes unnoticed");
    }
    for harmful in ["PrivateUsers=yes", "RestrictNamespaces=yes", "ProtectKernelTunables=yes", "SystemCallFilter=@system-service"] {
        // the line goes at the end of [Service]
        let mut broken = text.clone();
        broken.insert_str(text.find("\n[Install]").unwrap(), &format!("\n{harmful}"));
        assert!(!unit_problems("harness-s-worker.service", &broken).is_empty(), "{harmful} goes unnoticed");
    }
}
