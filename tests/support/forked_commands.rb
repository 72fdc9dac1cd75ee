# What tests/support/diff_oracle.rb and puppet_oracle.rb share: run a
# command many times in one Ruby process that has loaded it once, each run
# in a forked child whose stdin is /dev/null and whose stdout and stderr go
# to files, at most `parallel` at once.
require 'base64'
require 'fileutils'
require 'tmpdir'

# Runs `yield job` in a child per job, in job.fetch('dir'), and returns one
# {"status", "stdout", "stderr"} (base64) per job, in order. The block runs
# the command; the child's exit status is the command's.
def run_forked(jobs, parallel)
  tmp = Dir.mktmpdir('forked_commands')
  out_path = ->(i, stream) { File.join(tmp, "#{i}.#{stream}") }
  results = Array.new(jobs.size)
  running = {} # pid => index
  reap = lambda do
    pid, status = Process.wait2
    i = running.delete(pid)
    code = status.exited? ? status.exitstatus : 128 + (status.termsig || 0)
    results[i] = {
      'status' => code,
      'stdout' => Base64.strict_encode64(File.binread(out_path.(i, 'out'))),
      'stderr' => Base64.strict_encode64(File.binread(out_path.(i, 'err')))
    }
    File.delete(out_path.(i, 'out'), out_path.(i, 'err'))
  end
  jobs.each_with_index do |job, i|
    reap.call while running.size >= parallel
    pid = fork do
      Dir.chdir(job.fetch('dir'))
      $stdin.reopen(File::NULL)
      $stdout.reopen(out_path.(i, 'out'), 'w')
      $stderr.reopen(out_path.(i, 'err'), 'w')
      # reopen makes stderr buffered; a real command's stderr is not, and
      # log lines must come out before an uncaught exception's report.
      $stderr.sync = true
      yield job
    end
    running[pid] = i
  end
  reap.call until running.empty?
  results
ensure
  FileUtils.rm_rf(tmp) if tmp
end
