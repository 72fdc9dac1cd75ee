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

# As run_forked, but `per_child` jobs run one after another in each child
# (after the first, a run skips the child's start), each with its own
# stdout and stderr; `reset` runs before each job but the first. A job
# that ends other than by `exit` (an uncaught exception) is run again
# alone through run_forked, so its report is the real command's.
def run_batched(jobs, parallel, per_child, reset)
  return run_forked(jobs, parallel) { |job| yield job } if per_child <= 1
  tmp = Dir.mktmpdir('batched_commands')
  path = ->(i, stream) { File.join(tmp, "#{i}.#{stream}") }
  groups = (0...jobs.size).each_slice(per_child).map { |is| { 'dir' => tmp, 'is' => is } }
  run_forked(groups, parallel) do |group|
    group.fetch('is').each_with_index do |i, n|
      reset.call unless n.zero?
      Dir.chdir(jobs[i].fetch('dir'))
      $stdout.reopen(path.(i, 'out'), 'w')
      $stderr.reopen(path.(i, 'err'), 'w')
      $stderr.sync = true
      status = begin
        yield jobs[i]
        0
      rescue SystemExit => e
        e.status
      rescue Exception # rubocop:disable Lint/RescueException
        'again'
      end
      $stdout.flush
      File.write(path.(i, 'status'), status.to_s)
    end
  end
  results = jobs.each_index.map do |i|
    status = File.exist?(path.(i, 'status')) ? File.read(path.(i, 'status')) : 'again'
    next nil if status == 'again'

    { 'status' => Integer(status),
      'stdout' => Base64.strict_encode64(File.binread(path.(i, 'out'))),
      'stderr' => Base64.strict_encode64(File.binread(path.(i, 'err'))) }
  end
  again = results.each_index.select { |i| results[i].nil? }
  run_forked(again.map { |i| jobs[i] }, parallel) { |job| yield job }.each_with_index do |r, n|
    results[again[n]] = r
  end
  results
ensure
  FileUtils.rm_rf(tmp) if tmp
end
