# For tests/shim: runs the real `puppet` command many times in one Ruby
# process. Puppet is required once; each invocation runs in a forked child
# that sets ARGV and the working directory, points fd 1 and 2 at files, and
# runs Puppet's command line exactly as /usr/bin/puppet does, so its exit
# status, stdout and stderr are the command's.
#
# Input (stdin): a JSON array of jobs {"args": [...], "dir": "/abs/dir"}.
# Output (stdout): a JSON array of {"status", "stdout", "stderr"} (base64).
# ENV: PUPPET_ORACLE_JOBS = children run at once (default 2).
require 'json'
require 'base64'
require 'tmpdir'
require 'fileutils'
require 'puppet'
require 'puppet/util/command_line'
# Code every run needs, loaded once here rather than in each child.
%w[puppet/application/lookup puppet/application/apply puppet/pops puppet/parser puppet/parser/compiler puppet/node puppet/node/facts puppet/resource/catalog puppet/indirector/node/plain puppet/indirector/facts/yaml puppet/indirector/catalog/compiler puppet/functions puppet/pops/lookup].each { |f| require f }

PARALLEL = Integer(ENV.fetch('PUPPET_ORACLE_JOBS', '2'))

jobs = JSON.parse($stdin.read)
tmp = Dir.mktmpdir('puppet_oracle')
results = Array.new(jobs.size)
running = {}

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
    Dir.chdir(job.fetch('dir'))
    $stdin.reopen(File::NULL)
    $stdout.reopen(out_path(tmp, i, 'out'), 'w')
    $stderr.reopen(out_path(tmp, i, 'err'), 'w')
    # /usr/bin/puppet: the command line, then exit with its status.
    Puppet::Util::CommandLine.new('puppet', job.fetch('args')).execute
  end
  running[pid] = i
end
reap.call until running.empty?
FileUtils.rm_rf(tmp)
$stdout.write(JSON.generate(results))
