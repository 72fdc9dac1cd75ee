# The wire codec (lib/puppet_x/hierad/wire.rb).
require_relative 'test_helper'

class WireTest < Minitest::Test
  Wire = PuppetX::Hierad::Wire

  def test_round_trips_every_type
    table = [
      nil, true, false, 0, -7, 12_345_678_901_234_567_890, 1.0, -0.0, 1.5e300, 'text', 'héllo ✓', '',
      [], {}, [1, [2, [3]]],
      { 'a' => 1, 'b' => { 'c' => [nil, false] } },
      :sym, [:a, { 'k' => :v }],
      { 1 => 'int key', :sym => 'symbol key', nil => 'nil key', true => 't', 1.5 => 'f' },
      { '__hierad__' => 'user data that looks like a tag' },
      { 'outer' => { 2 => { 'inner' => :x } } }
    ]
    table.each do |value|
      back = Wire.load(Wire.dump(value))
      assert_equal Marshal.dump(value), Marshal.dump(back), "#{value.inspect} came back as #{back.inspect}"
    end
  end

  # The json library stops at 100 levels by default; Hiera has no limit.
  def test_deep_values_both_ways
    deep = [1]
    150.times { deep = { 'k' => [deep] } }
    assert_equal deep, Wire.load(Wire.dump(deep))
  end

  # JSON carries text only: a scope String that is not UTF-8 is named by
  # its place (never its content) in a clear error, not the json library's
  # "partial character in source".
  def test_strings_that_are_not_utf8_are_named_by_their_place
    bad = "se\xFFcret".dup.force_encoding(Encoding::UTF_8)
    [
      [{ 'fqdn' => bad }, '["fqdn"]'],
      [{ 'roles' => ['ok', { 'name' => bad }] }, '["roles", 1, "name"]'],
      [{ bad => 1 }, '["(a key)"]'],
      [bad.b, '[]']
    ].each do |value, where|
      error = assert_raises(PuppetX::Hierad::Error) { Wire.dump(value) }
      assert_includes error.message, "the String at #{where} of a request"
      assert_includes error.message, 'not valid UTF-8'
      refute_includes error.message, 'cret'
    end
    # Binary Strings that hold UTF-8 text are sent as text.
    assert_equal '{"fqdn":"héllo"}', Wire.dump({ 'fqdn' => 'héllo'.b })
    # After a failure the thread's encoder still works.
    assert_equal '{"a":1}', Wire.dump({ 'a' => 1 })
  end

  def test_non_finite_floats
    [Float::INFINITY, -Float::INFINITY].each { |f| assert_equal f, Wire.load(Wire.dump(f)) }
    assert Wire.load(Wire.dump(Float::NAN)).nan?
    assert_equal '{"__hierad__":"float","value":"NaN"}', Wire.dump(Float::NAN)
  end

  def test_hash_order_is_kept
    h = { 'z' => 1, 'a' => 2, 3 => 'm' }
    assert_equal h.keys, Wire.load(Wire.dump(h)).keys
  end

  def test_decodes_the_servers_forms
    text = '{"found":true,"value":{"__hierad__":"hash","pairs":[[1,"one"],[{"__hierad__":"sym","name":"s"},' \
           '{"__hierad__":"float","value":"-Infinity"}]]}}'
    assert_equal({ 'found' => true, 'value' => { 1 => 'one', s: -Float::INFINITY } }, Wire.load(text))
  end

  def test_unknown_tags_are_errors
    assert_raises(PuppetX::Hierad::Error) { Wire.load('{"__hierad__":"date","value":"2024-01-01"}') }
  end
end
