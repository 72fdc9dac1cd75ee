# For tests/oracle/shim/tls.rs: the Hiera 3 backend against a real hierad
# serving TLS with a private CA and requiring credentials (--auth),
# compared with the yaml backend over the same files, in one process:
#
# - eight threads share one Hiera (one backend, one client) and look up
#   every key, with a token; the answers must be the yaml backend's, over
#   few keep-alive TLS connections, the hierarchy registered once;
# - Basic credentials; a wrong token; no CA file;
# - `failure: stale` across an outage (the server is stopped), and `error`.
#
# Input (stdin, JSON): {"url", "ca_file", "token", "user", "password",
#   "environment", "level", "config" (a yaml-backend hiera.yaml), "dir"
#   (where its datadir is relative to), "scope", "pid" (the server's)}.
# Output (stdout, JSON): what happened; tls.rs judges it.
require 'json'
require 'yaml'
require 'hiera'
require 'hiera/backend/hierad_backend'

input = JSON.parse($stdin.read)
Dir.chdir(input.fetch('dir'))
yaml_config = YAML.load_file(input.fetch('config')).merge(logger: 'noop')
scope = input.fetch('scope')
url = input.fetch('url')
ca_file = input.fetch('ca_file')

def hierad_config(base, input, extra)
  settings = { url: input.fetch('url'), environment: input.fetch('environment'), level: input.fetch('level') }
  base.merge(backends: ['hierad'], hierad: settings.merge(extra))
end

def outcome
  [:value, yield]
rescue Exception => e # rubocop:disable Lint/RescueException -- Hiera raises Exception itself
  [:error, "#{e.class}: #{e.message}"]
end

def same?(a, b)
  Marshal.dump(a) == Marshal.dump(b)
end

warnings = []
Hiera.singleton_class.send(:define_method, :warn) { |message| warnings << message }

# Requests (lookups, and the hierarchy's registrations apart) and
# connections, counted where the shim makes them.
COUNTS = { 'requests' => 0, 'registrations' => 0, 'connections' => 0 }
COUNTS_LOCK = Mutex.new
module Counted
  def request(head, body)
    what = head.start_with?('POST /api/v1/hierarchies ') ? 'registrations' : 'requests'
    COUNTS_LOCK.synchronize { COUNTS[what] += 1 }
    super
  end

  private

  def open_socket(*)
    COUNTS_LOCK.synchronize { COUNTS['connections'] += 1 }
    super
  end
end
PuppetX::Hierad::Connection.prepend(Counted)
stats = -> { COUNTS_LOCK.synchronize { COUNTS.dup } }
result = {}

# The yaml backend's answers, one by one.
datadir = yaml_config[:yaml][:datadir].gsub('%{::fqdn}', scope.fetch('::fqdn'))
keys = Dir.glob(File.join(datadir, '**', '*.yaml')).sort.flat_map { |f| YAML.load_file(f).keys.grep(String) }.uniq
keys << 'no_such_key'
hiera = Hiera.new(config: yaml_config)
expected = keys.to_h { |k| [k, outcome { hiera.lookup(k, 'the default', scope) }] }
result['keys'] = keys.size
result['found'] = expected.count { |_, (kind, v)| kind == :value && v != 'the default' }

# Eight threads, one Hiera, a token.
hiera = Hiera.new(config: hierad_config(yaml_config, input, token: input.fetch('token'), ca_file: ca_file))
before = stats.call
mismatches = Queue.new
threads = Array.new(8) do |t|
  Thread.new do
    keys.rotate(t * keys.size / 8).each do |k|
      got = outcome { hiera.lookup(k, 'the default', scope) }
      mismatches << [t, k, got[1].inspect[0, 200], expected[k][1].inspect[0, 200]] unless same?(got, expected[k])
    end
  end
end
threads.each(&:join)
after = stats.call
result['threaded'] = {
  'lookups' => 8 * keys.size,
  'mismatches' => Array.new(mismatches.size) { mismatches.pop },
  'requests' => after['requests'] - before['requests'],
  'registrations' => after['registrations'] - before['registrations'],
  'connections' => after['connections'] - before['connections']
}

# Basic credentials.
hiera = Hiera.new(config: hierad_config(yaml_config, input, user: input.fetch('user'), password: input.fetch('password'),
                                                           ca_file: ca_file))
result['basic_mismatches'] = keys.reject { |k| same?(outcome { hiera.lookup(k, 'the default', scope) }, expected[k]) }

# Refusals: the default is never the answer.
hiera = Hiera.new(config: hierad_config(yaml_config, input, token: 'wrong', ca_file: ca_file))
result['wrong_token'] = outcome { hiera.lookup(keys.first, 'the default', scope) }
hiera = Hiera.new(config: hierad_config(yaml_config, input, token: input.fetch('token')))
result['no_ca_file'] = outcome { hiera.lookup(keys.first, 'the default', scope) }

# An outage: stale answers what it answered before, and only that.
stale = Hiera.new(config: hierad_config(yaml_config, input, token: input.fetch('token'), ca_file: ca_file, failure: 'stale'))
result['stale_before'] = same?(outcome { stale.lookup(keys.first, 'the default', scope) }, expected[keys.first])
pid = input.fetch('pid')
Process.kill('TERM', pid)
# Until the server has exited (bounded: 10 s). A closed port is not
# enough: while it stops, the server still answers a request that
# arrives on an open keep-alive connection, as this backend's is.
# Exited is gone or a zombie (the Rust test reaps it later).
gone = lambda do
  File.read("/proc/#{pid}/stat").split(') ').last.start_with?('Z')
rescue Errno::ENOENT
  true
end
200.times do
  break if gone.call

  sleep 0.05
end
warnings.clear
result['stale_after'] = same?(outcome { stale.lookup(keys.first, 'the default', scope) }, expected[keys.first])
result['stale_warnings'] = warnings.dup
result['stale_other'] = outcome { stale.lookup(keys.last, 'the default', scope) }
hiera = Hiera.new(config: hierad_config(yaml_config, input, token: input.fetch('token'), ca_file: ca_file))
result['error_mode'] = outcome { hiera.lookup(keys.first, 'the default', scope) }

$stdout.write(JSON.generate(result))
