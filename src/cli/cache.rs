//! `fibon-verify cache clear`: empties the judge cache; and the `--cache DIR` /
//! `--no-cache` options `gate` and `run` share.

use std::path::PathBuf;

use crate::chat::cache::{self, Cache};
use crate::errors::ExpectedError;
use crate::exit_code;

/// Where model judgements are kept between runs.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct CacheArgs {
    /// Keep model judges' validated answers here, and serve a repeated request from it
    /// (no call, no cost).
    #[arg(long, value_name = "DIR", default_value = cache::DEFAULT_DIR)]
    cache: PathBuf,

    /// Ask every model judge again; read and write no cache.
    #[arg(long, conflicts_with = "cache")]
    no_cache: bool,
}

impl CacheArgs {
    /// The cache these options name.
    pub(crate) fn cache(&self) -> Cache {
        if self.no_cache {
            Cache::off()
        } else {
            Cache::at(&self.cache)
        }
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct CacheCommand {
    #[command(subcommand)]
    action: CacheAction,
}

#[derive(Debug, clap::Subcommand)]
enum CacheAction {
    /// Remove every cached judgement (only the cache's own files).
    Clear {
        /// The cache folder.
        #[arg(long, value_name = "DIR", default_value = cache::DEFAULT_DIR)]
        cache: PathBuf,
    },
}

pub(crate) fn run(args: CacheCommand) -> Result<i32, ExpectedError> {
    match args.action {
        CacheAction::Clear { cache: dir } => {
            let removed = cache::clear(&dir).map_err(ExpectedError::unwritable(&dir))?;
            writeln!(
                super::stderr(),
                "removed {removed} cached judgement(s) from {}",
                dir.display()
            )?;
            Ok(exit_code::SUCCESS)
        }
    }
}
