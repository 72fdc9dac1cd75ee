# The Ruby half of tests/oracle/merge_ruby.rs: runs the real Hiera 3.10 hash-merge
# fold (Backend.merge_answer, deep_merge 1.1.1) and array resolution on the
# cases it reads, one JSON object a line, and answers one JSON line each.
#   {"id":N, "op":"fold", "levels":[tagged Hash, ...] (highest priority first),
#    "spec":{"kind":"config", "merge_behavior":tagged?, "deep_merge_options":tagged?}
#          | {"kind":"hash", "rt":tagged Hash}}
#   {"id":N, "op":"resolve_array", "value":tagged Array}
# -> {"id":N, "ok":tagged} or {"id":N, "err":[class, message]}, plus "trace":
#    what deep_merge wrote to stdout (merge_debug).
require 'json'
require 'stringio'
require 'hiera'
require 'deep_merge'
require 'deep_merge/rails_compat'
require_relative 'tagged'

def config_for(spec)
  conf = { logger: 'noop' }
  conf[:merge_behavior] = Tagged.decode(spec['merge_behavior']) if spec.key?('merge_behavior')
  conf[:deep_merge_options] = Tagged.decode(spec['deep_merge_options']) if spec.key?('deep_merge_options')
  conf
end

def run(c)
  case c['op']
  when 'fold'
    spec = c['spec']
    if spec['kind'] == 'config'
      Hiera::Config.load(config_for(spec))
      rt = :hash
    else
      rt = Tagged.decode(spec['rt'])
    end
    answer = {}
    c['levels'].each { |t| answer = Hiera::Backend.merge_answer(Tagged.decode(t), answer, rt) }
    answer
  when 'resolve_array'
    [Tagged.decode(c['value'])].flatten.uniq.compact
  else
    raise ArgumentError, "unknown op #{c['op']}"
  end
end

STDOUT.sync = false
STDIN.each_line do |line|
  c = JSON.parse(line)
  out = { 'id' => c['id'] }
  captured = StringIO.new
  begin
    $stdout = captured
    result = run(c)
    $stdout = STDOUT
    out['ok'] = Tagged.encode(result)
  rescue Exception => e # rubocop:disable Lint/RescueException -- report every class
    $stdout = STDOUT
    out['err'] = [e.class.name, e.message]
  end
  out['trace'] = captured.string.dup.force_encoding('UTF-8').scrub
  STDOUT.puts JSON.generate(out)
end
