//! Which test runs each kind of fixed deadline in real time.
//!
//! Every deadline of `src/hermes/deadlines.rs` belongs to one kind below. A test that
//! waits one out sets [`super::common::TIME_SCALE`] to a factor below 1 and waits a
//! fraction of Hermes' time; exactly one test per kind runs it unscaled, to prove
//! Hermes' value itself, and it is named here (its doc says "The real-time test of").
//! A kind with no real-time test says why. `repo_rules::each_deadline_kind_has_one_real_time_test`
//! checks the table against the source and the suite.

/// One kind of deadline: the `deadlines.rs` constants it covers and its real-time test.
pub struct Kind {
    pub name: &'static str,
    pub deadlines: &'static [&'static str],
    pub real_time: RealTime,
}

/// The one test that runs a kind unscaled (`file::function` under `tests/suite/`), or
/// why none does.
pub enum RealTime {
    Test(&'static str),
    None(&'static str),
}

pub const KINDS: &[Kind] = &[
    Kind {
        name: "auth.lock wait",
        deadlines: &["AUTH_LOCK_WAIT"],
        real_time: RealTime::Test(
            "auth_shutdown::a_held_auth_lock_costs_one_wait_and_is_named_with_its_holder",
        ),
    },
    Kind {
        name: "sign-in requests (token refresh, xAI discovery, Nous refresh, account, prefetch)",
        deadlines: &[
            "TOKEN_REFRESH",
            "XAI_DISCOVERY",
            "GATEWAY_REFRESH",
            "GATEWAY_PREFETCH",
            "GATEWAY_ACCOUNT",
        ],
        real_time: RealTime::None(
            "no test waits one out: the token and portal fakes answer, or are held and released by the test",
        ),
    },
    Kind {
        name: "refresh drain at exit",
        deadlines: &["REFRESH_DRAIN"],
        real_time: RealTime::None(
            "the auth_shutdown drain tests end with the refresh (1 s); the 25 s cut is not waited out",
        ),
    },
    Kind {
        name: "kanban lock wait",
        deadlines: &["KANBAN_LOCK_WAIT"],
        real_time: RealTime::Test(
            "kanban::kanban_call_ends_with_a_clear_error_while_another_process_holds_the_board",
        ),
    },
    Kind {
        name: "kanban initialisation lock",
        deadlines: &["KANBAN_INIT_LOCK"],
        real_time: RealTime::None(
            "only the refusal of a FIFO or symlink lock file is tested (at once); a held lock is not waited out",
        ),
    },
    Kind {
        name: "memory lock wait",
        deadlines: &["MEMORY_LOCK_WAIT"],
        real_time: RealTime::None(
            "only the refusal of a FIFO or symlink lock file is tested (at once); a held lock is not waited out",
        ),
    },
    Kind {
        name: "session_search call",
        deadlines: &["SESSION_SEARCH_CALL"],
        real_time: RealTime::None(
            "session_search_hostile and session_search_fuzz run it scaled; 20 s unscaled is not cheap",
        ),
    },
    Kind {
        name: "HTTP cuts",
        deadlines: &[
            "HTTP_CONNECT",
            "HTTP_READ",
            "HTTP_TOTAL",
            "HTTP_MAX_RETRY_WAIT",
        ],
        real_time: RealTime::None(
            "net_ssrf checks the cuts in-process with its own short limits; the defaults (10 to 45 s) are not cheap",
        ),
    },
    Kind {
        name: "browser command and navigation limits",
        deadlines: &["BROWSER_COMMAND"],
        real_time: RealTime::Test("browser::browser_blocked_urls_timeouts_and_truncation"),
    },
    Kind {
        name: "browser inactivity",
        deadlines: &["BROWSER_INACTIVITY", "BROWSER_INACTIVITY_FLOOR"],
        real_time: RealTime::Test("browser::browser_idle_session_closes_and_relaunches"),
    },
    Kind {
        name: "Camofox limits",
        deadlines: &[
            "CAMOFOX_COMMAND_FLOOR",
            "CAMOFOX_HTTP_READ",
            "CAMOFOX_HTTP_TOTAL",
            "CAMOFOX_NAVIGATE",
            "CAMOFOX_HEALTH",
        ],
        real_time: RealTime::None(
            "browser_camofox and browser_camofox_errors run them scaled; the Chromium tests are the real-time ones of the command and idle limits",
        ),
    },
    Kind {
        name: "cloud browser session create and release",
        deadlines: &["CLOUD_CREATE", "CLOUD_RELEASE"],
        real_time: RealTime::None("the cloud fakes answer at once; no test waits one out"),
    },
    Kind {
        name: "giving back freed heap and the binary's code after a quiet second (serve)",
        deadlines: &["IDLE_TRIM"],
        real_time: RealTime::None(
            "nothing a client sees waits on it; `server::idle`'s unit tests run the wait at zero and check when it trims",
        ),
    },
    Kind {
        name: "doctor's own steps (codex's config check, `tools --json`, the cap on a step)",
        deadlines: &[
            "DOCTOR_CODEX_CHECK",
            "DOCTOR_TOOLS_CHECK",
            "DOCTOR_MAX_STEP",
        ],
        real_time: RealTime::None(
            "doctor::a_step_that_never_ends… waits the tools check out scaled (10 s unscaled is not cheap); the real codex answers the config check at once, and no test sets a start-up timeout over 600 s",
        ),
    },
    Kind {
        name: "doctor's handshake waits (past codex's start-up timeout, the exit grace)",
        deadlines: &[
            "DOCTOR_EXTRA_WAIT_MIN",
            "DOCTOR_EXTRA_WAIT_MAX",
            "DOCTOR_EXIT_GRACE",
        ],
        real_time: RealTime::Test(
            "doctor::a_server_that_does_not_answer_in_time_fails_like_in_codex",
        ),
    },
];
