# The answers' JSON parser (lib/puppet_x/hierad/json_parser.rb): the json
# library and Oj give the same Ruby values. CI installs ruby-oj (.ci/run),
# so both are always tested.
require_relative 'test_helper'
require 'rbconfig'
require 'puppet_x/hierad/wire'

class JsonParserTest < Minitest::Test
  Parser = PuppetX::Hierad::JsonParser

  def setup
    skip 'JRuby has no Oj' if RUBY_ENGINE == 'jruby'
    begin
      require 'oj'
    rescue LoadError
      flunk 'Oj is not installed: install ruby-oj (Debian) or the oj gem, as .ci/run does'
    end
  end

  def teardown
    Parser.reset
  end

  # Everything about a value that a caller could tell apart.
  def sig(value)
    case value
    when Hash then [:hash, value.map { |k, v| [sig(k), sig(v)] }]
    when Array then [:array, value.map { |v| sig(v) }]
    when String then [:string, value.frozen?, value.encoding.name, value.b]
    when Float then [:float, [value].pack('G')]
    else [value.class, value]
    end
  end

  def assert_same_values(text)
    json = Parser.parse_json(text)
    oj = Parser.parse_oj(text)
    assert_equal sig(json), sig(oj), "#{text[0, 200]}: json #{json.inspect[0, 200]}, Oj #{oj.inspect[0, 200]}"
  end

  NUMBERS = %w[0 -0 17 -17 9007199254740993 18446744073709551616 -9223372036854775809
               123456789012345678901234567890 0.0 -0.0 1.5 0.1 0.30000000000000004 1e20 1E5 1.5e+3 1e-7
               1.00000000000000000000001 123456789.123456789 2.2250738585072011e-308 4.9e-324
               2.4703282292062327e-324 1.7976931348623157e308 1e309 -1e400 9007199254740993.0].freeze

  def test_numbers
    NUMBERS.each { |n| assert_same_values("[#{n}]") }
    assert_equal [Integer, Float, Float], Parser.parse_oj('[123456789012345678901234567890,1.00000000000000000000001,1e5]').map(&:class)
  end

  def test_random_floats_bit_for_bit
    r = Random.new(20_261_127)
    texts = []
    4000.times do
      f = r.bytes(8).unpack1('G')
      next unless f.finite?

      texts << f.to_s << format('%.17g', f) << format('%.25e', f)
    end
    texts.each_slice(300) { |slice| assert_same_values("[#{slice.join(',')}]") }
  end

  def test_strings
    ['"plain"', '"héllo ✓ 😀"', '"\\u00e9\\ud83d\\ude00"', '"\\u0000\\b\\f\\n\\r\\t\\"\\\\\\/"', '""',
     JSON.generate(['x' * 100_000])].each { |s| assert_same_values("[#{s}]") }
    r = Random.new(7)
    200.times do
      s = Array.new(r.rand(0..20)) { [r.rand(0..0xD7FF)].pack('U') }.join
      assert_same_values(JSON.generate([s]))
      assert_same_values(JSON.generate([s], ascii_only: true))
    end
  end

  def test_structures
    ['{}', '[]', '{"a":{"b":[1,{"c":null}],"d":true,"e":false}}', '{"a":1,"a":2}',
     '{"json_class":"Range","^o":"x","__hierad__":"sym"}', "#{'[' * 150}1#{']' * 150}",
     "#{'{"k":' * 150}1#{'}' * 150}"].each { |t| assert_same_values(t) }
    assert_equal [[[[1]]]], Parser.parse_json('[[[[1]]]]')
  end

  # Hiera's deeper merge changes its left operand: no String of an answer
  # may be shared, with another answer or within one.
  def test_new_objects_every_time
    text = '{"a":"same","b":"same","c":["same",{"d":"same"}]}'
    %i[parse_json parse_oj].each do |how|
      one = Parser.public_send(how, text)
      two = Parser.public_send(how, text)
      strings = [one['a'], one['b'], one['c'][0], one['c'][1]['d'], two['a']]
      assert_equal strings.size, strings.map(&:object_id).uniq.size, how
      refute strings.any?(&:frozen?), how
    end
  end

  # Another library may change Oj's process-wide defaults.
  def test_oj_defaults_set_elsewhere_change_nothing
    saved = Oj.default_options
    Oj.default_options = { mode: :object, bigdecimal_load: :bigdecimal, cache_str: 30, symbol_keys: true,
                           integer_range: (-10..10), create_additions: true, hash_class: Hash }
    ['{"a":"x","b":[12345678901,1.5,0.1]}', '{"json_class":"Range","^o":"Range"}'].each { |t| assert_same_values(t) }
  ensure
    Oj.default_options = saved
  end

  def test_not_json_is_an_error_naming_it
    %i[parse_json parse_oj].each do |how|
      error = assert_raises(PuppetX::Hierad::Error) { Parser.public_send(how, '<html>502</html>') }
      assert_match(/hierad sent an answer that is not JSON/, error.message)
    end
  end

  def test_the_choice
    Parser.reset('json')
    assert_equal 'json', Parser.current
    assert_equal({ 'a' => 1 }, PuppetX::Hierad::Wire.load('{"a":1}'))
    Parser.reset('oj')
    assert_equal 'oj', Parser.current
    assert_equal({ 'a' => :s }, PuppetX::Hierad::Wire.load('{"a":{"__hierad__":"sym","name":"s"}}'))
    error = assert_raises(PuppetX::Hierad::Error) { Parser.reset('yajl') }
    assert_match(/HIERAD_SHIM_JSON must be one of json, oj, not "yajl"/, error.message)
  end

  # In a Ruby that has not loaded Oj, the json library parses the first
  # OJ_AFTER bytes; Oj is loaded after them (and not before).
  def test_oj_is_loaded_after_enough_answers
    lib = File.expand_path('../lib', __dir__)
    script = <<~RUBY
      require 'puppet_x/hierad/wire'
      p = PuppetX::Hierad::JsonParser
      text = '{"found":true,"value":"' + 'x' * 100_000 + '"}'
      seen = []
      (p::OJ_AFTER / text.bytesize + 2).times { p.parse(text); seen << [p.current, !defined?(::Oj).nil?] }
      puts seen.uniq.inspect
    RUBY
    out = IO.popen([{ 'HIERAD_SHIM_JSON' => nil }, RbConfig.ruby, '-I', lib, '-e', script], &:read)
    assert_equal "[[\"json\", false], [\"oj\", true]]\n", out
  end
end
