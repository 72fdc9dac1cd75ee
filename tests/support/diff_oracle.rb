# The oracle of tests/oracle/differential.rs: runs the REAL `hiera` command many
# times in one Ruby process, fast.
#
# Hiera is required once; then each invocation runs in a forked child that
# sets ARGV, the working directory and COLUMNS, points fd 1 and 2 at files,
# and `load`s the unmodified /usr/bin/hiera script. The child exits exactly
# as the command would (`exit 1`, an uncaught exception, or normally), so its
# status, stdout and stderr are the command's (only the backtrace frames
# under an uncaught exception differ, which the suite ignores).
#
# Input (stdin): a JSON array of jobs {"args": [...], "dir": "/abs/dir",
# "columns": "80" | null}; null means COLUMNS unset.
# Output (stdout): a JSON array, one entry per job in order:
# {"status": Integer, "stdout": base64, "stderr": base64}.
# ENV: DIFF_ORACLE_JOBS = children run at once (default 2),
#      DIFF_ORACLE_HIERA = the command script (default /usr/bin/hiera).
require 'json'
require_relative 'forked_commands'

# Only what the command would load anyway: loading it here once saves every
# child the time, and `require` of an already loaded file is a no-op.
require 'hiera'
require 'hiera/util'
require 'optparse'
require 'pp'
require 'yaml'
require 'json'

HIERA_SCRIPT = ENV.fetch('DIFF_ORACLE_HIERA', '/usr/bin/hiera')
PARALLEL = Integer(ENV.fetch('DIFF_ORACLE_JOBS', '2'))

$stdout.write(JSON.generate(run_forked(JSON.parse($stdin.read), PARALLEL) do |job|
  # A short-lived child never needs to collect garbage; this saves a
  # quarter of the time and changes nothing the command prints.
  GC.disable
  if job['columns'] then ENV['COLUMNS'] = job['columns'] else ENV.delete('COLUMNS') end
  ARGV.replace(job.fetch('args'))
  load HIERA_SCRIPT
end))
