# The oracle of tests/differential.rs: runs the REAL `hiera` command many
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
require 'base64'
require 'tmpdir'
require 'fileutils'

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

jobs = JSON.parse($stdin.read)
tmp = Dir.mktmpdir('diff_oracle')
results = Array.new(jobs.size)
running = {} # pid => index

def out_path(tmp, i, stream) = File.join(tmp, "#{i}.#{stream}")

reap = lambda do
  pid, status = Process.wait2
  i = running.delete(pid)
  code = status.exited? ? status.exitstatus : 128 + (status.termsig || 0)
  results[i] = {
    'status' => code,
    'stdout' => Base64.strict_encode64(File.binread(out_path(tmp, i, 'out'))),
    'stderr' => Base64.strict_encode64(File.binread(out_path(tmp, i, 'err')))
  }
  File.delete(out_path(tmp, i, 'out'), out_path(tmp, i, 'err'))
end

jobs.each_with_index do |job, i|
  reap.call while running.size >= PARALLEL
  pid = fork do
    # A short-lived child never needs to collect garbage; this saves a
    # quarter of the time and changes nothing the command prints.
    GC.disable
    Dir.chdir(job.fetch('dir'))
    if job['columns'] then ENV['COLUMNS'] = job['columns'] else ENV.delete('COLUMNS') end
    $stdin.reopen(File::NULL)
    $stdout.reopen(out_path(tmp, i, 'out'), 'w')
    $stderr.reopen(out_path(tmp, i, 'err'), 'w')
    # reopen makes stderr buffered; the real command's stderr is not, and
    # log lines must come out before an uncaught exception's report.
    $stderr.sync = true
    ARGV.replace(job.fetch('args'))
    load HIERA_SCRIPT
  end
  running[pid] = i
end
reap.call until running.empty?
FileUtils.rm_rf(tmp)
$stdout.write(JSON.generate(results))
