//! The Dockerfile: its build stage replayed in a clean folder (the build
//! as `cargo check`, sharing this build's target folder: a release build
//! from nothing takes too long), the runtime stage's files, its
//! HEALTHCHECK, and the entrypoint's two ways of starting; and the image
//! itself, built with podman on a Debian base made by mmdebstrap (no image
//! registry is reachable from CI) with this build's binary, and run.
//!
//! The replayed build and the image take a minute or more, so they are
//! ignored in the fast suite and run by .ci/run (`cargo test --test it
//! docker:: -- --ignored`).

use crate::binary;
use crate::server::call;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The Dockerfile's instructions, continuation lines joined: (stage name,
/// instruction, arguments); the stage of the ARGs before the first FROM is
/// "".
fn instructions() -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(Path::new(ROOT).join("Dockerfile")).unwrap();
    let mut joined = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let line = line.trim();
        if current.is_empty() && (line.is_empty() || line.starts_with('#')) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(part) => current.push_str(part),
            None => {
                current.push_str(line);
                joined.push(std::mem::take(&mut current));
            }
        }
    }
    let mut stage = String::new();
    let mut out = Vec::new();
    for line in joined {
        let (word, rest) = line.split_once(' ').unwrap_or((&line, ""));
        let word = word.to_uppercase();
        if word == "FROM" {
            let (_, name) = rest.split_once(" AS ").expect("every stage is named");
            stage = name.trim().to_owned();
        }
        out.push((stage.clone(), word, rest.trim().to_owned()));
    }
    out
}

/// The instructions of the stage `name`.
fn stage(name: &str) -> Vec<(String, String)> {
    instructions()
        .into_iter()
        .filter(|(s, _, _)| s == name)
        .map(|(_, w, a)| (w, a))
        .collect()
}

fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        std::fs::copy(from, to).unwrap_or_else(|e| panic!("COPY {}: {e}", from.display()));
    }
}

/// Where the build stage's COPY puts a source: `./src` in WORKDIR.
fn destination(workdir: &Path, source: &str, dest: &str) -> PathBuf {
    let dest = dest.trim_start_matches("./");
    if dest.is_empty() || dest.ends_with('/') {
        workdir
            .join(dest)
            .join(Path::new(source).file_name().unwrap())
    } else {
        workdir.join(dest)
    }
}

#[test]
#[ignore = "a cargo check of the crate in a clean folder: run by .ci/run"]
fn the_build_stage_builds_in_a_clean_folder() {
    let clean = tempfile::tempdir().unwrap();
    let steps = stage("build");
    assert_eq!(steps[0].0, "FROM");
    let mut ran = 0;
    for (word, args) in &steps {
        match word.as_str() {
            "COPY" => {
                let words: Vec<&str> = args.split_whitespace().collect();
                let (dest, sources) = words.split_last().unwrap();
                for source in sources {
                    let to = destination(clean.path(), source, dest);
                    if let Some(parent) = to.parent() {
                        std::fs::create_dir_all(parent).unwrap();
                    }
                    copy_tree(&Path::new(ROOT).join(source), &to);
                }
            }
            "RUN" => {
                // `cargo build --release …` as a check: what the folder
                // must hold is the same.
                let words: Vec<&str> = args.split_whitespace().collect();
                assert_eq!(&words[..3], ["cargo", "build", "--release"], "{args}");
                let out = Command::new(env!("CARGO"))
                    .arg("check")
                    .args(&words[3..])
                    .current_dir(clean.path())
                    .env("CARGO_TARGET_DIR", Path::new(ROOT).join("target"))
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                ran += 1;
            }
            "FROM" | "WORKDIR" => {}
            other => panic!("the build stage has {other}: teach this test what it does"),
        }
    }
    assert_eq!(ran, 1);
}

#[test]
fn the_runtime_stage_runs_unprivileged_with_a_healthcheck() {
    let steps = stage("base");
    let has = |word: &str| {
        steps
            .iter()
            .find(|(w, _)| w == word)
            .map(|(_, a)| a.clone())
    };
    let health = has("HEALTHCHECK").expect("a HEALTHCHECK");
    // hierad-health runs `hierad health`, which finds the server on its
    // port over TLS too (tests/it/health.rs); a plain-HTTP probe would fail
    // on TLS. It runs in the image below.
    assert!(health.ends_with("CMD [\"hierad-health\"]"), "{health}");
    assert!(
        has("USER").is_none(),
        "the entrypoint drops root itself (a USER would keep it from fixing the volume)"
    );
    assert_eq!(
        has("ENTRYPOINT").as_deref(),
        Some("[\"hierad-entrypoint\"]")
    );
    assert_eq!(has("VOLUME").as_deref(), Some("/var/lib/hierad"));
    // `docker build` without --target makes the last stage.
    assert_eq!(instructions().last().unwrap().0, "runtime");
    // The runtime stages take hierad from the build stage, or from the
    // build context (`prebuilt`), on this base.
    for (name, from) in [("runtime", "--from=build "), ("prebuilt", "${HIERAD_BIN} ")] {
        let steps = stage(name);
        assert_eq!(steps[0].1, format!("base AS {name}"));
        let copy = steps.iter().find(|(w, _)| w == "COPY").unwrap();
        assert!(copy.1.starts_with(from), "{name}: {}", copy.1);
    }
    // Every file the stage copies from the repository exists and is
    // executable.
    for (word, args) in &steps {
        if word == "COPY" && !args.starts_with("--from") {
            let source = args.split_whitespace().next().unwrap();
            let path = Path::new(ROOT).join(source);
            assert!(path.exists(), "{source}");
            use std::os::unix::fs::PermissionsExt as _;
            assert!(
                path.metadata().unwrap().permissions().mode() & 0o111 != 0,
                "{source} is not executable"
            );
        }
    }
}

/// The entrypoint as a user that is not root: it runs hierad when the
/// data folder is writable and says what to do when it is not. (Its root
/// branch needs the image's hierad user: it chowns and drops to it.)
#[test]
fn the_entrypoint_without_root() {
    let script = Path::new(ROOT).join("docker/entrypoint.sh");
    let syntax = Command::new("sh").arg("-n").arg(&script).status().unwrap();
    assert!(syntax.success());
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_hierad"))
        .parent()
        .unwrap()
        .to_owned();
    let data = tempfile::tempdir().unwrap();
    let is_root = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
    let run = |mode: u32| {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(data.path(), std::fs::Permissions::from_mode(mode)).unwrap();
        let mut command = if is_root {
            // As nobody, as `docker run --user 65534` would.
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "sh"]);
            c
        } else {
            Command::new("sh")
        };
        command
            .arg(&script)
            .arg("--version")
            .env("HIERAD_DATA", data.path())
            .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()))
            .output()
            .unwrap()
    };
    let out = run(0o777);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("hierad "));
    let out = run(0o555);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("is not writable by uid") && stderr.contains("chown it on the host"),
        "{stderr}"
    );
}

/// The README states the minimum Rust version as Cargo.toml's
/// rust-version. (That the crate keeps to it: its dependencies' own
/// rust-versions are at most 1.85 in Cargo.lock, clippy's incompatible_msrv
/// lint refuses newer standard library APIs, and the code uses no let
/// chains, which need 1.88.)
#[test]
fn the_readme_states_the_rust_version_of_cargo_toml() {
    let manifest = std::fs::read_to_string(Path::new(ROOT).join("Cargo.toml")).unwrap();
    let version = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .unwrap()
        .trim_matches('"');
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("Rust {version} or newer")),
        "README.md must state Rust {version}"
    );
}

/// Runs `command` to its end, killed past `limit`, its output kept in
/// files (no pipe to fill).
fn bounded(mut command: Command, limit: Duration) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = (dir.path().join("out"), dir.path().join("err"));
    let mut child = command
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{command:?} did not finish within {limit:?}: {}",
                std::fs::read_to_string(&err).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Output {
        status,
        stdout: std::fs::read(&out).unwrap(),
        stderr: std::fs::read(&err).unwrap(),
    }
}

fn succeeded(what: &str, out: &Output) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({}): {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The containers and images a test makes with podman, removed when it
/// ends, passed or not.
struct Podman {
    conf: PathBuf,
    made: RefCell<Vec<(&'static str, String)>>,
    _dir: tempfile::TempDir,
}

impl Podman {
    /// Settings these machines need, harmless elsewhere: the sandbox
    /// lacks CAP_SYS_RESOURCE, so the runtime cannot raise the open file
    /// and process limits to podman's defaults (crun: `setrlimit
    /// RLIMIT_NOFILE: Operation not permitted`), and its cgroups are
    /// hybrid, v1 with a v2 hierarchy holding a controller, which crun
    /// refuses (`cgroups in hybrid mode not supported`) and runc takes; no
    /// systemd, so cgroupfs and a file for events.
    fn new() -> Podman {
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("containers.conf");
        std::fs::write(
            &conf,
            "[containers]\n\
             default_ulimits = [\"nofile=4096:4096\", \"nproc=4096:4096\"]\n\
             [engine]\n\
             runtime = \"runc\"\n\
             cgroup_manager = \"cgroupfs\"\n\
             events_logger = \"file\"\n",
        )
        .unwrap();
        Podman {
            conf,
            made: RefCell::new(Vec::new()),
            _dir: dir,
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new("podman");
        command.env("CONTAINERS_CONF", &self.conf).args(args);
        command
    }

    /// `podman args…`, which must succeed within `limit`: its output.
    fn ok(&self, args: &[&str], limit: Duration) -> String {
        succeeded(
            &format!("podman {}", args.join(" ")),
            &bounded(self.command(args), limit),
        )
    }

    /// Removed at the end: a container (`"container"`) or an image.
    fn made(&self, kind: &'static str, name: &str) {
        self.made.borrow_mut().push((kind, name.to_owned()));
    }

    /// `podman run -d --name NAME args…`, as the container `name`.
    fn start(&self, name: &str, args: &[String]) {
        self.made("container", name);
        let mut all = vec!["run", "-d", "--name", name];
        all.extend(args.iter().map(String::as_str));
        self.ok(&all, Duration::from_secs(60));
    }

    /// Waits for the container's HEALTHCHECK to pass (`podman healthcheck
    /// run` runs it now: without systemd, podman has no timer to run it
    /// every 30 s), at most 60 tries half a second apart.
    fn healthy(&self, name: &str) {
        let mut last = String::new();
        for _ in 0..60 {
            let out = bounded(
                self.command(&["healthcheck", "run", name]),
                Duration::from_secs(30),
            );
            if out.status.success() {
                let state = self.ok(
                    &["inspect", "--format", "{{.State.Health.Status}}", name],
                    Duration::from_secs(30),
                );
                assert_eq!(state, "healthy");
                return;
            }
            last = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let running = self.ok(
                &["inspect", "--format", "{{.State.Running}}", name],
                Duration::from_secs(30),
            );
            if running != "true" {
                break;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        // What the probe itself said, and the server's log.
        let probes = bounded(
            self.command(&["inspect", "--format", "{{json .State.Health.Log}}", name]),
            Duration::from_secs(30),
        );
        let logs = bounded(self.command(&["logs", name]), Duration::from_secs(30));
        panic!(
            "{name} is not healthy: {last}\nthe probes: {}\nits log: {}{}",
            String::from_utf8_lossy(&probes.stdout),
            String::from_utf8_lossy(&logs.stdout),
            String::from_utf8_lossy(&logs.stderr)
        );
    }

    /// The host pid of the container's first process.
    fn pid(&self, name: &str) -> String {
        self.ok(
            &["inspect", "--format", "{{.State.Pid}}", name],
            Duration::from_secs(30),
        )
    }
}

impl Drop for Podman {
    fn drop(&mut self) {
        for (kind, name) in self.made.borrow().iter().rev() {
            let args: &[&str] = if *kind == "container" {
                &["rm", "-f", "-t", "0", name]
            } else {
                &["rmi", "-f", name]
            };
            let _ = bounded(self.command(args), Duration::from_secs(60));
        }
    }
}

/// A Debian base image of the host's release (the binary is linked against
/// the host's C library), bootstrapped from Debian's packages by
/// mmdebstrap, as bookworm-slim is: the tarball is kept in the target
/// folder for the day, so later runs only import it.
fn debian_base(podman: &Podman) -> String {
    let release = std::fs::read_to_string("/etc/os-release").unwrap();
    let codename = release
        .lines()
        .find_map(|l| l.strip_prefix("VERSION_CODENAME="))
        .expect("a Debian host: /etc/os-release names its release")
        .trim_matches('"')
        .to_owned();
    let day = succeeded(
        "date",
        &bounded(
            {
                let mut c = Command::new("date");
                c.arg("-u").arg("+%Y%m%d");
                c
            },
            Duration::from_secs(10),
        ),
    );
    let cache = Path::new(env!("CARGO_BIN_EXE_hierad"))
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .join("debian-base");
    std::fs::create_dir_all(&cache).unwrap();
    let tar = cache.join(format!("{codename}-{day}.tar"));
    if !tar.exists() {
        // One tarball kept: yesterday's goes.
        for old in std::fs::read_dir(&cache).unwrap() {
            let _ = std::fs::remove_file(old.unwrap().path());
        }
        let partial = tar.with_extension("partial.tar");
        let mut mmdebstrap = Command::new("mmdebstrap");
        mmdebstrap.args(["--variant=minbase", "--quiet"]);
        // As slim images do: no manuals, documentation or translations.
        for option in [
            "path-exclude=/usr/share/man/*",
            "path-exclude=/usr/share/info/*",
            "path-exclude=/usr/share/doc/*",
            "path-include=/usr/share/doc/*/copyright",
            "path-exclude=/usr/share/locale/*",
        ] {
            mmdebstrap.arg(format!("--dpkgopt={option}"));
        }
        mmdebstrap.arg(&codename).arg(&partial);
        succeeded("mmdebstrap", &bounded(mmdebstrap, Duration::from_secs(600)));
        std::fs::rename(&partial, &tar).unwrap();
    }
    let image = format!(
        "localhost/hierad-test-base:{codename}-{}",
        std::process::id()
    );
    podman.made("image", &image);
    podman.ok(
        &["import", "--quiet", &tar.to_string_lossy(), &image],
        Duration::from_secs(120),
    );
    image
}

/// The Dockerfile's `prebuilt` target on `base`, with this build's binary
/// (stripped: the image needs no debugging symbols) in a build context of
/// its own.
fn build_image(podman: &Podman, base: &str) -> String {
    let context = tempfile::tempdir().unwrap();
    std::fs::create_dir(context.path().join("docker")).unwrap();
    for script in ["entrypoint.sh", "health.sh"] {
        std::fs::copy(
            Path::new(ROOT).join("docker").join(script),
            context.path().join("docker").join(script),
        )
        .unwrap();
    }
    let binary = context.path().join("hierad");
    let mut strip = Command::new("strip");
    strip
        .arg("-o")
        .arg(&binary)
        .arg(env!("CARGO_BIN_EXE_hierad"));
    if !bounded(strip, Duration::from_secs(60)).status.success() {
        std::fs::copy(env!("CARGO_BIN_EXE_hierad"), &binary).unwrap();
    }
    let image = format!("localhost/hierad-test:{}", std::process::id());
    podman.made("image", &image);
    let dockerfile = Path::new(ROOT).join("Dockerfile");
    podman.ok(
        &[
            "build",
            "--quiet",
            // HEALTHCHECK is in Docker's image format only, not OCI's.
            "--format=docker",
            "--target=prebuilt",
            &format!("--build-arg=BASE={base}"),
            "--build-arg=HIERAD_BIN=hierad",
            "--file",
            &dockerfile.to_string_lossy(),
            "--tag",
            &image,
            &context.path().to_string_lossy(),
        ],
        Duration::from_secs(300),
    );
    image
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The first `docker run` of the Dockerfile's header, as podman's
/// arguments: the published port, the data folder, the container's name
/// and the image replaced by this test's.
fn first_example(port: u16, data: &Path, image: &str) -> Vec<String> {
    let text = std::fs::read_to_string(Path::new(ROOT).join("Dockerfile")).unwrap();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("#   docker run "))
        .expect("the Dockerfile's header shows a docker run");
    let mut args = Vec::new();
    let mut words = line.split_whitespace();
    while let Some(word) = words.next() {
        match word {
            "-p" => {
                let publish = words.next().unwrap();
                let (host, inside) = publish.rsplit_once(':').unwrap();
                let (ip, _) = host.rsplit_once(':').unwrap_or(("", host));
                args.push(word.to_owned());
                args.push(
                    format!("{ip}:{port}:{inside}")
                        .trim_start_matches(':')
                        .to_owned(),
                );
            }
            "-v" => {
                let (_, inside) = words.next().unwrap().split_once(':').unwrap();
                args.push(word.to_owned());
                args.push(format!("{}:{inside}", data.display()));
            }
            "-d" => {}
            "hierad" => args.push(image.to_owned()),
            _ => args.push(word.to_owned()),
        }
    }
    args
}

const LOOKUP: &str = r#"{"environment": 1, "key": "nova", "resolution": "hash", "scope": {"::fqdn": "node-126.test.domain.local"}}"#;

/// The uid and gid a process runs as (its real ones; all four of each must
/// agree), from /proc: the container's processes are the host's.
fn ids(pid: &str) -> (String, String) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        let values: Vec<&str> = status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap()
            .split_whitespace()
            .collect();
        assert!(values.iter().all(|v| *v == values[0]), "{name} {values:?}");
        values[0].to_owned()
    };
    (field("Uid:"), field("Gid:"))
}

/// The image built and run for real (docs/deploy.md, "Container image"): the
/// Dockerfile's first example starts, turns healthy, answers a lookup from
/// the host and runs as hierad (uid 8750); the HEALTHCHECK follows a
/// `--listen` flag; an auth file `hierad auth` made 0600 for root is
/// refused with the way out, then, given to uid 8750 as docs/deploy.md
/// says, serves, and stays readable after `hierad auth` edits it on the
/// host. Needs root (podman's port publishing and the chown).
#[test]
#[ignore = "builds an image and runs containers with podman: run by .ci/run"]
fn the_image_runs_unprivileged_healthy_and_reachable() {
    assert!(
        rustix::process::geteuid().is_root(),
        "run as root, as .ci/run does"
    );
    let podman = Podman::new();
    let base = debian_base(&podman);
    let image = build_image(&podman, &base);
    let tag = std::process::id();

    // The Dockerfile's first example, on a data folder the host made
    // root's: the entrypoint gives it to hierad.
    let data = tempfile::tempdir().unwrap();
    let port = free_port();
    let first = format!("hierad-test-first-{tag}");
    podman.start(&first, &first_example(port, data.path(), &image));
    podman.healthy(&first);
    let answer = call(
        "POST",
        &format!("http://127.0.0.1:{port}/api/v1/lookup"),
        Some(LOOKUP),
        &[("content-type", "application/json")],
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.json()["found"], true, "{}", answer.body);
    let pid = podman.pid(&first);
    assert_eq!(ids(&pid), ("8750".into(), "8750".into()));
    {
        use std::os::unix::fs::MetadataExt as _;
        let db = std::fs::metadata(data.path().join("hierad.db")).unwrap();
        assert_eq!((db.uid(), db.gid()), (8750, 8750));
    }

    // --listen as a flag: the HEALTHCHECK probes that port, not
    // HIERAD_LISTEN's.
    let port = free_port();
    let moved = format!("hierad-test-listen-{tag}");
    podman.start(
        &moved,
        &[
            "-p".into(),
            format!("127.0.0.1:{port}:9000"),
            image.clone(),
            "serve".into(),
            "--insecure".into(),
            "--listen".into(),
            "0.0.0.0:9000".into(),
        ],
    );
    podman.healthy(&moved);

    // An auth file as `hierad auth` makes it on the host: 0600, root's.
    let etc = tempfile::tempdir().unwrap();
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(etc.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let auth = etc.path().join("auth.toml");
    let add_token = |name: &str| {
        binary::ok(&[
            "auth",
            "add-token",
            "--file",
            &auth.to_string_lossy(),
            "--role",
            "read",
            name,
        ])
        .trim()
        .to_owned()
    };
    let token = add_token("ci");
    let mount = format!("{}:/etc/hierad:ro", etc.path().display());
    let refused = bounded(
        podman.command(&[
            "run",
            "--rm",
            "-v",
            &mount,
            &image,
            "serve",
            "--auth",
            "/etc/hierad/auth.toml",
        ]),
        Duration::from_secs(60),
    );
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("/etc/hierad/auth.toml is not readable by the user hierad (uid 8750)")
            && stderr.contains("chown 8750:8750"),
        "{stderr}"
    );
    assert!(!stderr.contains(&token));

    // Handed to uid 8750, as docs/deploy.md says.
    std::os::unix::fs::chown(&auth, Some(8750), Some(8750)).unwrap();
    let port = free_port();
    let secured = format!("hierad-test-auth-{tag}");
    podman.start(
        &secured,
        &[
            "-p".into(),
            format!("127.0.0.1:{port}:8750"),
            "-v".into(),
            mount.clone(),
            image.clone(),
            "serve".into(),
            "--auth".into(),
            "/etc/hierad/auth.toml".into(),
        ],
    );
    podman.healthy(&secured);
    let url = format!("http://127.0.0.1:{port}/api/v1/lookup");
    let lookup = |token: &str| {
        let bearer = format!("Bearer {token}");
        let mut headers = vec![("content-type", "application/json")];
        if !token.is_empty() {
            headers.push(("authorization", &bearer));
        }
        call("POST", &url, Some(LOOKUP), &headers).status
    };
    assert_eq!(lookup(""), 401);
    assert_eq!(lookup(&token), 200);

    // `hierad auth` edits the file on the host as root: it stays uid
    // 8750's, and the server takes the new token (it looks every 2 s).
    let second = add_token("ci-2");
    {
        use std::os::unix::fs::MetadataExt as _;
        let meta = std::fs::metadata(&auth).unwrap();
        assert_eq!((meta.uid(), meta.gid()), (8750, 8750));
    }
    let mut status = 0;
    for _ in 0..40 {
        status = lookup(&second);
        if status == 200 {
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    assert_eq!(status, 200, "the server did not take the edited auth file");
}
