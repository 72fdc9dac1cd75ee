# The rules of override_resources apart from Puppet (puppet/lib/puppet_x/hierad_resources/
# override.rb); Puppet applying them is tested in tests/oracle/overrides.
require_relative 'test_helper'
require 'puppet_x/hierad_resources/override'

class OverrideTest < Minitest::Test
  Override = PuppetX::Hierad::Override
  OverrideError = PuppetX::Hierad::OverrideError

  CONFIGURATION = {
    'file' => { '/a' => { 'content' => 'a' }, '/b' => {} },
    'notify' => { 'n' => { 'message' => 'm' } }
  }.freeze

  def test_entries_put_the_types_defaults_below_the_data
    rules = Override.new(CONFIGURATION, {}, { 'file' => { 'mode' => '0600', 'content' => 'd' } })
    assert_equal [['file', '/a', { 'mode' => '0600', 'content' => 'a' }],
                  ['file', '/b', { 'mode' => '0600', 'content' => 'd' }],
                  ['notify', 'n', { 'message' => 'm' }]], rules.entries.map(&:to_a)
  end

  def test_filters_and_overrides
    rules = Override.new(CONFIGURATION, { 'types_filter' => ['notify'] })
    assert_equal [%w[notify n]], rules.entries.map { |e| [e.type, e.title] }
    rules = Override.new(CONFIGURATION, { 'types_filter' => ['notify'] }, {}, { 'titles_filter' => ['/b'], 'types_filter' => ['file'], 'create' => nil })
    assert_equal [['file', '/b']], rules.entries.map { |e| [e.type, e.title] }
    assert_equal %w[notify], Override.new(CONFIGURATION, { 'types_filter' => ['notify'] }, { 'exec' => {} }).types
  end

  def test_create_and_its_exception_lists
    table = [
      [true, [], [], true], [true, ['file'], [], false], [true, [], ['/a'], false], [true, ['notify'], ['/b'], true],
      [false, [], [], false], [false, ['file'], [], true], [false, [], ['/a'], true], [false, ['notify'], ['/b'], false]
    ]
    table.each do |create, types, titles, expected|
      rules = Override.new({}, { 'create' => create, 'types_create_exception' => types, 'titles_create_exception' => titles })
      assert_equal expected, rules.create?('file', '/a'), [create, types, titles].inspect
    end
  end

  def test_refusals_name_where_and_what
    {
      [[], {}, {}] => 'configuration: expected a Hash, got Array []',
      [{ 'file' => [] }, {}, {}] => 'configuration.file: expected a Hash, got Array []',
      [{ 'file' => { '/a' => 'x' } }, {}, {}] => 'configuration.file./a: expected a Hash, got String "x"',
      [{ '' => {} }, {}, {}] => 'configuration: expected a non-empty String key, got String ""',
      [{ 'file' => { '/a' => { 1 => 2 } } }, {}, {}] => 'configuration.file./a: expected a non-empty String key, got Integer 1',
      [{}, { 'create' => 'yes' }, {}] => 'configuration_options.create: expected true or false, got String "yes"',
      [{}, { 'titles_filter' => 'x' }, {}] => 'configuration_options.titles_filter: expected a list of Strings, got String "x"',
      [{}, { 'titles_create' => [] }, {}] => 'configuration_options: unknown option "titles_create"',
      [{}, {}, { 'file' => 'x' }] => 'defaults.file: expected a Hash, got String "x"'
    }.each do |args, message|
      error = assert_raises(OverrideError) { Override.new(*args) }
      assert error.message.start_with?(message), "#{args.inspect}: #{error.message}"
    end
  end

  # docs/spec/override-resources.md's `override_resources {'package': configuration => {<title> => <parameters>}}`:
  # the same rules over one type's data, defaults without the type level.
  def test_the_per_type_form_is_the_nested_form_of_one_type
    rules = Override.new({ 'mc' => { 'ensure' => 'latest' }, 'vim' => {} }, { 'titles_create_exception' => ['vim'] },
                         { 'ensure' => 'installed' }, {}, type: 'package')
    assert_equal [['package', 'mc', { 'ensure' => 'latest' }], ['package', 'vim', { 'ensure' => 'installed' }]],
                 rules.entries.map(&:to_a)
    assert_equal %w[package], rules.types
    assert rules.create?('package', 'mc')
    refute rules.create?('package', 'vim')
    assert_equal 'configuration.mc', rules.where('configuration', 'package', 'mc')
    assert_equal 'defaults', rules.where('defaults', 'package')
    assert_equal 'configuration.file./a', Override.new(CONFIGURATION).where('configuration', 'file', '/a')
    assert_equal [], Override.new({ 'mc' => {} }, { 'types_filter' => ['file'] }, {}, {}, type: 'package').entries
  end

  def test_per_type_refusals_name_where_the_user_wrote_it
    {
      [{ 'mc' => 'latest' }, {}, {}] => 'configuration.mc: expected a Hash, got String "latest"',
      [{ 'mc' => { 1 => 2 } }, {}, {}] => 'configuration.mc: expected a non-empty String key, got Integer 1',
      [{}, {}, []] => 'defaults: expected a Hash, got Array []',
      [{}, {}, { '' => 1 }] => 'defaults: expected a non-empty String key, got String ""'
    }.each do |args, message|
      error = assert_raises(OverrideError) { Override.new(*args, {}, type: 'package') }
      assert error.message.start_with?(message), "#{args.inspect}: #{error.message}"
    end
  end
end
