# For tests/oracle/shim: runs the real `puppet` command many times in one Ruby
# process. Puppet is required once; each invocation runs in a forked child
# that sets ARGV and the working directory, points fd 1 and 2 at files, and
# runs Puppet's command line exactly as /usr/bin/puppet does, so its exit
# status, stdout and stderr are the command's.
#
# With PUPPET_ORACLE_BATCH=N, N runs share a child (forked_commands.rb's
# run_batched).
#
# Input (stdin): a JSON array of jobs {"args": [...], "dir": "/abs/dir"}.
# Output (stdout): a JSON array of {"status", "stdout", "stderr"} (base64).
# ENV: PUPPET_ORACLE_JOBS = children run at once (default 2).
require 'json'
require_relative 'forked_commands'
require 'puppet'
require 'puppet/util/command_line'
# Code every run needs, loaded once here rather than in each child.
%w[puppet/application/lookup puppet/application/apply puppet/pops puppet/parser puppet/parser/compiler puppet/node puppet/node/facts puppet/resource/catalog puppet/indirector/node/plain puppet/indirector/facts/yaml puppet/indirector/catalog/compiler puppet/functions puppet/pops/lookup].each { |f| require f }

PARALLEL = Integer(ENV.fetch('PUPPET_ORACLE_JOBS', '2'))
# PUPPET_ORACLE_BATCH = runs per child (default 1). Each run after the
# first starts from cleared settings, logs and once-only warnings, and the
# context Puppet had before the first.
BATCH = Integer(ENV.fetch('PUPPET_ORACLE_BATCH', '1'))
Puppet.mark_context('puppet_oracle')
RESET = lambda do
  Puppet.rollback_context('puppet_oracle')
  Puppet.mark_context('puppet_oracle')
  Puppet.settings.send(:clear_everything_for_tests)
  Puppet::Util::Log.close_all
  $unique_warnings&.clear
  $deprecation_warnings&.clear
end

$stdout.write(JSON.generate(run_batched(JSON.parse($stdin.read), PARALLEL, BATCH, RESET) do |job|
  # /usr/bin/puppet: the command line, then exit with its status.
  Puppet::Util::CommandLine.new('puppet', job.fetch('args')).execute
end))
