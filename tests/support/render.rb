# The Ruby half of tests/oracle/render_ruby.rs: renders values the way Ruby 3.1,
# json and Psych do, for comparison with the Rust renderers.
#
# Reads one JSON object on stdin:
#   {"values": [tagged, ...], "widths": [w, ...], "cli_widths": [w, ...],
#    "floats": ["<u64 bits>", ...],
#    "fixtures": ["path.yaml", ...], "fixture_widths": [w, ...]}
# and writes one JSON object on stdout:
#   {"unicode": {"print": [...], "word": [...]},
#    "values": [result, ...], "floats": [Float#to_s, ...],
#    "fixtures": [{"file", "key", "value": tagged, "result": result}, ...]}
# where result = {"inspect", "to_s", "pp": [per width], "json",
#                 "yaml": {"ok": text} | {"error": [class, message]},
#                 "cli_ruby": [per cli width], "cli_json", "cli_yaml": like yaml};
# a fixture's values are every top-level value of the file, printed at the
# fixture widths (both for pp and the command).
# Values travel as tagged JSON (tagged.rb).
require 'json'
require 'pp'
require 'stringio'
require 'yaml'
require_relative 'tagged'
require_relative 'render_unicode'

Encoding.default_external = Encoding::UTF_8
Encoding.default_internal = nil

# What /usr/bin/hiera's output_answer does, format by format.
def output_answer(ans, format)
  case format
  when :json then puts JSON.dump(ans)
  when :ruby then ans.is_a?(String) ? puts(ans) : pp(ans)
  when :yaml then puts ans.to_yaml
  end
end

# The hiera command's output with stdout a pipe and COLUMNS set: Kernel#pp
# takes its width from there (PP.width_for).
def cli(ans, format, columns = nil)
  saved_out = $stdout
  saved_columns = ENV['COLUMNS']
  $stdout = StringIO.new
  ENV['COLUMNS'] = columns&.to_s
  output_answer(ans, format)
  $stdout.string
ensure
  $stdout = saved_out
  ENV['COLUMNS'] = saved_columns
end

# An exception as the Rust side reports it: class and first message line
# (Ruby 3.1's error_highlight appends the failing source line).
def attempt
  { 'ok' => yield }
rescue StandardError => e
  { 'error' => [e.class.name, e.message.lines.first.to_s.chomp] }
end

def render(v, widths, cli_widths)
  {
    'inspect' => v.inspect,
    'to_s' => v.to_s,
    'pp' => widths.map { |w| PP.pp(v, ''.dup, w) },
    'json' => JSON.dump(v),
    'yaml' => attempt { v.to_yaml },
    'cli_ruby' => cli_widths.map { |w| cli(v, :ruby, w + 1) },
    'cli_json' => cli(v, :json),
    'cli_yaml' => attempt { cli(v, :yaml) },
  }
end

input = JSON.parse($stdin.read)
widths = input['widths']
cli_widths = input['cli_widths']
fixture_widths = input['fixture_widths']
out = {
  'unicode' => RenderUnicode.tables,
  'values' => input['values'].map { |t| render(Tagged.decode(t), widths, cli_widths) },
  'floats' => input['floats'].map { |bits| [Integer(bits)].pack('Q<').unpack1('E').to_s },
  'fixtures' => input['fixtures'].flat_map do |path|
    YAML.load(File.read(path)).map do |key, value|
      { 'file' => File.basename(path), 'key' => key.to_s,
        'value' => Tagged.encode(value),
        'result' => render(value, fixture_widths, fixture_widths) }
    end
  end,
}
$stdout.write(JSON.generate(out))
