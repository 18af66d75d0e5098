//! A real PostgreSQL server for the tests of the shared journal: Debian's
//! `postgresql` binaries (`initdb`, `pg_ctl`, `psql` under
//! `/usr/lib/postgresql/*/bin`), a cluster in a fresh temporary directory
//! owned by the `postgres` user (PostgreSQL refuses to run as root), on a
//! free port of 127.0.0.1 with password authentication, stopped and removed
//! when the guard drops (a failing test unwinds through it too).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A running server; stopped and its directory removed on drop.
pub struct PgServer {
    dir: PathBuf,
    bin: PathBuf,
    pub port: u16,
    pub password: String,
    as_postgres: bool,
}

/// The newest `/usr/lib/postgresql/<version>/bin` that has `initdb`.
fn binaries() -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|bin| bin.join("initdb").exists() && bin.join("pg_ctl").exists())
        .collect();
    found.sort();
    found.pop()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn checked(output: std::io::Result<Output>, what: &str) -> Output {
    let output = output.unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        output.status.success(),
        "{what} failed: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

impl PgServer {
    /// Starts a new cluster. Panics, saying how to install PostgreSQL, where
    /// its binaries are missing: these tests are never skipped.
    pub fn start() -> PgServer {
        let bin = binaries().unwrap_or_else(|| {
            panic!(
                "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin: the tests of the shared \
                 journal start a real server; install it with `apt-get install -y postgresql` (Debian's \
                 package; sudo when not root) and run them again"
            )
        });
        let as_postgres = running_as_root();
        let made = checked(Command::new("mktemp").args(["-d", "/tmp/extract-pg.XXXXXX"]).output(), "mktemp");
        let dir = PathBuf::from(String::from_utf8(made.stdout).unwrap().trim());
        let password = format!("pw-{}-{}", std::process::id(), free_port());
        std::fs::write(dir.join("pwfile"), &password).unwrap();
        if as_postgres {
            checked(Command::new("chown").args(["-R", "postgres:postgres"]).arg(&dir).output(), "chown");
        }
        let server = PgServer { dir, bin, port: free_port(), password, as_postgres };
        server.run(
            "initdb",
            &[
                "-D",
                &server.data(),
                "-U",
                "postgres",
                "--auth=scram-sha-256",
                &format!("--pwfile={}", server.dir.join("pwfile").display()),
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        let options = format!("-p {} -k {} -c listen_addresses=127.0.0.1", server.port, server.dir.display());
        server.run(
            "pg_ctl",
            &[
                "-D",
                &server.data(),
                "-l",
                &server.dir.join("log").display().to_string(),
                "-o",
                &options,
                "-w",
                "start",
            ],
        );
        server
    }

    fn data(&self) -> String {
        self.dir.join("data").display().to_string()
    }

    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(path);
            command
        } else {
            Command::new(path)
        }
    }

    fn run(&self, program: &str, args: &[&str]) -> Output {
        checked(self.command(program).args(args).current_dir(&self.dir).output(), program)
    }

    /// The URL of database `db`, password included.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://postgres:{}@127.0.0.1:{}/{db}", self.password, self.port)
    }

    /// Creates database `db`.
    pub fn create_database(&self, db: &str) {
        self.sql("postgres", &format!("CREATE DATABASE \"{db}\""));
    }

    /// Runs `sql` on database `db`, returning what `psql -tA` prints.
    pub fn sql(&self, db: &str, sql: &str) -> String {
        String::from_utf8(checked(self.psql(db, sql), "psql").stdout).unwrap().trim().to_string()
    }

    /// `psql -tAq -c sql` on database `db`, as the server's superuser.
    fn psql(&self, db: &str, sql: &str) -> std::io::Result<std::process::Output> {
        let port = self.port.to_string();
        self.command("psql")
            .args(["-h", "127.0.0.1", "-p", &port, "-U", "postgres", "-d", db, "-tAq", "-c", sql])
            .env("PGPASSWORD", &self.password)
            .current_dir(&self.dir)
            .output()
    }

    /// The number a `SELECT count(*) ...` gives; 0 while the schema does not exist yet.
    pub fn count(&self, db: &str, sql: &str) -> usize {
        let output = self.psql(db, sql).unwrap();
        String::from_utf8_lossy(&output.stdout).trim().parse().unwrap_or(0)
    }

    /// Stops the server at once (the clients see their connections drop).
    pub fn stop(&self) {
        let _ = self.command("pg_ctl").args(["-D", &self.data(), "-m", "immediate", "stop"]).output();
    }

    /// Starts it again after [`PgServer::stop`].
    pub fn restart(&self) {
        let options = format!("-p {} -k {} -c listen_addresses=127.0.0.1", self.port, self.dir.display());
        self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data(),
                "-l",
                &self.dir.join("log").display().to_string(),
                "-o",
                &options,
                "-w",
                "start",
            ],
        );
    }

    /// The postmaster's process id (its backends are its children).
    pub fn server_pid(&self) -> Option<u32> {
        let pid = std::fs::read_to_string(self.dir.join("data").join("postmaster.pid")).ok()?;
        pid.lines().next()?.trim().parse().ok()
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Whether this process runs as root (then the server runs as `postgres`).
fn running_as_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

impl Drop for PgServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
