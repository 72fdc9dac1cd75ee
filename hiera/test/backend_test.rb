# The Hiera 3 backend (lib/hiera/backend/hierad_backend.rb) against a
# scripted server: what it sends, how it reads answers and errors.
require_relative 'test_helper'
require 'hiera'
require 'hiera/backend/hierad_backend'
require 'digest'

class BackendTest < Minitest::Test
  def setup
    # What Hiera.new does first; a test may run before any Hiera.new.
    Hiera.logger = 'noop'
    Hiera::Backend.clear!
    @answers = []
    # Replies to hierarchy registrations; none left: 200 with an id.
    @registrations = []
    @server = FakeServer.new do |req|
      next [200, {}, '{"variables":["role","::fqdn"]}'] if req.path.end_with?('/scope')
      next @registrations.shift || [200, {}, JSON.generate('id' => id_of(req.body))] if req.path == REGISTER

      @answers.shift || [200, {}, '{"found":false}']
    end
  end

  REGISTER = '/api/v1/hierarchies'.freeze
  LEVELS = ['nodes/%{::fqdn}', 'role/%{role}', '42', 'common'].freeze

  # The fake server's id of a registration body (any 32 hex digits do).
  def id_of(body)
    Digest::SHA256.hexdigest(body)[0, 32]
  end

  def registrations
    @server.request_list.select { |r| r.path == REGISTER }
  end

  def teardown
    @server.stop
  end

  def hiera(extra = {})
    config = {
      backends: ['hierad'], logger: 'noop',
      hierarchy: ['nodes/%{::fqdn}', 'role/%{role}', 42, 'common'],
      hierad: { url: @server.url, environment: '%{env_id}', level: 'nodes=%{::fqdn}' }
    }
    Hiera.new(config: config.merge(extra))
  end

  def lookups(list = @server.request_list)
    list.select { |r| r.path == '/api/v1/lookup' }.map { |r| JSON.parse(r.body) }
  end

  def answer(json, status = 200)
    @answers << [status, {}, json]
  end

  SCOPE = { '::fqdn' => 'n1.example', 'env_id' => '7', 'role' => 'web' }.freeze

  def test_one_request_with_the_whole_context
    answer('{"found":true,"value":"v"}')
    assert_equal 'v', hiera.lookup('k', nil, SCOPE)
    requests = @server.request_list
    registered = requests.select { |r| r.path == REGISTER }
    assert_equal [{ 'hierarchy' => LEVELS }], registered.map { |r| JSON.parse(r.body) }
    sent = lookups(requests)
    assert_equal 1, sent.size
    assert_equal({
                   'environment' => '7', 'level' => 'nodes=n1.example', 'key' => 'k', 'resolution' => 'priority',
                   'hierarchy_id' => id_of(registered.first.body),
                   'merge_behavior' => { '__hierad__' => 'sym', 'name' => 'native' },
                   'deep_merge_options' => {}, 'scope' => SCOPE
                 }, sent.first)
  end

  def test_resolution_types_and_merge_settings
    config = { merge_behavior: 'deeper', deep_merge_options: { knockout_prefix: '--', 'sort_merged_arrays' => true } }
    h = hiera(config)
    answer('{"found":true,"value":["x"]}')
    h.lookup('k', nil, SCOPE, nil, :array)
    answer('{"found":true,"value":{}}')
    h.lookup('k', nil, SCOPE, nil, :hash)
    answer('{"found":true,"value":{}}')
    h.lookup('k', nil, SCOPE, 'special', { behavior: :deeper, knockout_prefix: 'xx', 'ignored' => 1 })
    answer('{"found":true,"value":1}')
    h.lookup('k', nil, SCOPE, %w[a b], :bogus)
    sent = lookups
    assert_equal ['array', 'hash', { 'behavior' => { '__hierad__' => 'sym', 'name' => 'deeper' }, 'knockout_prefix' => 'xx' }, 'priority'],
                 sent.map { |s| s['resolution'] }
    assert_equal 'deeper', sent[0]['merge_behavior']
    # deep_merge reads Symbol keys only: a String key is dropped, not sent as a Symbol.
    assert_equal({ 'knockout_prefix' => '--' }, sent[0]['deep_merge_options'])
    assert_equal [nil, nil, 'special', %w[a b]], sent.map { |s| s['order_override'] }
  end

  def test_keys_are_quoted_as_one_segment
    %w[plain a.b it's a."b"].each { |_| answer('{"found":false}') }
    hiera.lookup('plain', nil, SCOPE)
    hiera.lookup("'a.b'", nil, SCOPE)   # Hiera gives the backend the segment a.b
    hiera.lookup(%q("it's"), nil, SCOPE)
    hiera.lookup('x.y', nil, SCOPE)     # the backend gets x only
    assert_equal ['plain', '"a.b"', %q("it's"), 'x'], lookups.map { |s| s['key'] }
  end

  def test_found_nil_false_and_not_found
    answer('{"found":true,"value":null}')
    answer('{"found":true,"value":false}')
    answer('{"found":false}')
    h = hiera
    assert_nil h.lookup('a', 'default', SCOPE)
    assert_equal false, h.lookup('b', 'default', SCOPE)
    assert_equal 'default', h.lookup('c', 'default', SCOPE)
  end

  def test_values_arrive_with_their_types
    value = { 1 => :sym, 'f' => 1.0, 'i' => 2**70, 'n' => Float::INFINITY, 'a' => [nil, true, 'é'] }
    answer("{\"found\":true,\"value\":#{PuppetX::Hierad::Wire.dump(value)}}")
    got = hiera.lookup('k', nil, SCOPE)
    assert_equal Marshal.dump(value), Marshal.dump(got)
  end

  def test_hiera_errors_keep_class_and_message
    table = [
      ['Exception', "Hiera type mismatch for key 'k': expected Array and got Integer"],
      ['Hiera::InterpolationLoop', 'Lookup recursion detected in [hiera(\'a\')]'],
      ['Hiera::InterpolationInvalidValue', 'Cannot call alias in the string context'],
      ['ArgumentError', 'Syntax error in key: a..b'],
      ['DeepMerge::InvalidParameter', 'knockout_prefix cannot be an empty string in deep_merge!'],
      ['NoMethodError', "undefined method `include?' for 80:Integer"],
      ['Psych::SyntaxError', '(<unknown>): did not find expected key at line 1 column 1'],
      ['Psych::DisallowedClass', 'Tried to load unspecified class: Date'],
      ['SystemCallError', 'a message that is not an errno text'],
      ['Errno::EISDIR', 'Is a directory @ io_fread - /etc/hiera/x.yaml']
    ]
    table.each do |klass, message|
      answer(JSON.generate('error' => 'hiera_error', 'class' => klass, 'message' => message), 422)
      error = assert_raises(Exception) { hiera.lookup('k', nil, SCOPE) }
      assert_equal [klass, message], [error.class.name, error.message]
    end
    answer('{"error":"hiera_error","class":"No::Such::Class","message":"m"}', 422)
    error = assert_raises(RuntimeError) { hiera.lookup('k', nil, SCOPE) }
    assert_equal 'No::Such::Class: m', error.message
  end

  def test_other_refusals_name_the_server
    answer('{"error":"not_found","message":"environment 7 does not exist"}', 404)
    error = assert_raises(PuppetX::Hierad::Error) { hiera.lookup('k', 'default', SCOPE) }
    assert_includes error.message, @server.url
    assert_includes error.message, 'environment 7 does not exist'
  end

  # X-Hierad-Tagged: the server says whether the answer holds tagged
  # values (the backend then walks it) or not (it is used as parsed); a
  # server without the header has the text searched.
  def test_the_tagged_header_is_taken_at_its_word
    text = '{"found":true,"value":[{"__hierad__":"sym","name":"s"}]}'
    @answers << [200, { 'X-Hierad-Tagged' => 'true' }, text] << [200, {}, text]
    @answers << [200, { 'X-Hierad-Tagged' => 'false' }, text]
    h = hiera
    assert_equal [:s], h.lookup('k', nil, SCOPE)
    assert_equal [:s], h.lookup('k', nil, SCOPE)
    assert_equal [{ '__hierad__' => 'sym', 'name' => 's' }], h.lookup('k', nil, SCOPE)
  end

  def test_an_outage_is_an_error_unless_a_stale_answer_was_allowed
    answer('{"found":true,"value":{"a":["fresh"]}}')
    h = hiera(hierad: { url: @server.url, environment: 1, failure: 'stale' })
    first = h.lookup('k', nil, SCOPE)
    assert_equal({ 'a' => ['fresh'] }, first)
    first['a'] << 'changed by a merge' # Hiera's deeper merge changes its left operand
    @server.stop
    stale = h.lookup('k', nil, SCOPE)
    assert_equal({ 'a' => ['fresh'] }, stale)
    # Each stale answer is objects of its own.
    stale['a'][0] << ' changed'
    assert_equal({ 'a' => ['fresh'] }, h.lookup('k', nil, SCOPE))
    # Never a not-found: another request has no earlier answer.
    assert_raises(PuppetX::Hierad::Error) { h.lookup('other', 'default', SCOPE) }
    error = assert_raises(PuppetX::Hierad::Error) { hiera.lookup('k', 'default', SCOPE) }
    assert_match(/no server answered/, error.message)
  end

  # Timeouts and credentials of the :hierad: section reach the client.
  def test_settings_of_the_hierad_section
    answer('{"found":true,"value":1}')
    hiera(hierad: { url: @server.url, environment: 1, token: 'tok' }).lookup('k', nil, SCOPE)
    answer('{"found":true,"value":1}')
    hiera(hierad: { url: @server.url, environment: 1, user: 'u', password: 'p' }).lookup('k', nil, SCOPE)
    sent = @server.request_list.reject { |r| r.path.end_with?('/scope') }
    # Each configuration registers its hierarchy, with its credentials.
    assert_equal [REGISTER, '/api/v1/lookup'] * 2, sent.map(&:path)
    assert_equal ['Bearer tok'] * 2 + ["Basic #{['u:p'].pack('m0')}"] * 2, sent.map { |r| r.headers['authorization'] }

    @answers << :hang
    error = assert_raises(PuppetX::Hierad::Error) do
      hiera(hierad: { url: [@server.url], environment: 1, read_timeout: 0.3 }).lookup('k', 'default', SCOPE)
    end
    assert_includes error.message, "#{@server.url}: read timed out after 0.3s"

    hole = BlackHole.new
    error = assert_raises(PuppetX::Hierad::Error) do
      hiera(hierad: { url: hole.url, environment: 1, connect_timeout: '0.2' }).lookup('k', 'default', SCOPE)
    end
    assert_includes error.message, "#{hole.url}: connect timed out after 0.2s"
  ensure
    hole&.close
  end

  def test_configuration_errors
    assert_raises(Hiera::InvalidConfigurationError) { hiera(hierad: { url: @server.url }).lookup('k', nil, SCOPE) }
    assert_raises(Hiera::InvalidConfigurationError) do
      hiera(hierad: { url: @server.url, environment: 1, level: ['x'] }).lookup('k', nil, SCOPE)
    end
    assert_raises(Hiera::InvalidConfigurationError) do
      hiera(hierad: { url: @server.url, environment: 1, failure: 'graceful' }).lookup('k', nil, SCOPE)
    end
    assert_raises(Hiera::InvalidConfigurationError) { hiera(hierarchy: [nil]).lookup('k', nil, SCOPE) }
    # A misspelt setting is named, not ignored.
    error = assert_raises(Hiera::InvalidConfigurationError) do
      hiera(hierad: { url: @server.url, environment: 1, read_timout: 5 }).lookup('k', nil, SCOPE)
    end
    assert_includes error.message, 'read_timout'
  end

  # :environment: and :level: expand as Hiera's own expansion of
  # :datadir:, errors included.
  def test_templates_expand_as_hiera_expands_datadir
    scope = {
      '::fqdn' => 'n1', 'role' => 'web', 'n' => 3, 'nilv' => nil, 'f' => false, 'rec' => 'x-%{role}-y',
      'h' => { 'a' => 1 }, 'sym' => :s, 'fl' => 1.5, 'arr' => %w[a b], 'calling_class' => 'c::d'
    }
    templates = [
      'plain', 'nodes=%{::fqdn}', 'a%{role}b%{missing}c', '%{n}-%{f}', '%{nilv}x', '%{rec}', '%{h}', '%{h.a}',
      '%{sym}', '%{fl}', '%{arr}', '%{role}%{role}', '%{}', 'x%{::}y', "%{scope('role')}", "%{literal('%')}{role}",
      '%{calling_class}', '%{ role }', '%{0}', 'unclosed %{role'
    ]
    outcome = lambda do |&block|
      [:value, block.call]
    rescue Exception => e # rubocop:disable Lint/RescueException -- Hiera raises Exception
      [e.class, e.message]
    end
    seen = templates.map { |t| outcome.call { Hiera::Backend.interpolate_config(t, scope, nil) } }
    assert_includes seen, [:value, 'nodes=n1']
    assert_equal 1, seen.count { |o| o[0] != :value }, seen.inspect
    templates.each do |t|
      expected = outcome.call { Hiera::Backend.interpolate_config(t, scope, nil) }
      backend = Hiera::Backend::Hierad_backend.new
      assert_equal expected, outcome.call { backend.send(:expand, t, scope, nil) }, t
    end
  end

  # Puppet passes a Hiera::Scope, which cannot be listed: the backend asks
  # the server once which variables the data uses, and sends those and the
  # ones its own hierarchy uses.
  class PuppetLikeScope
    def initialize(vars)
      @vars = vars
    end

    def [](name)
      @vars[name]
    end

    def include?(name)
      @vars.include?(name)
    end
  end

  def test_a_scope_that_is_not_a_hash
    2.times { answer('{"found":true,"value":1}') }
    scope = PuppetLikeScope.new('::fqdn' => 'n1', 'role' => 'db', 'env_id' => '3', 'unused' => 'x', 'calling_class' => 'c')
    h = hiera(hierarchy: ['class/%{calling_class}', "%{scope('role')}"])
    h.lookup('k', nil, scope)
    h.lookup('k', nil, scope)
    requests = @server.request_list
    assert_equal 1, requests.count { |r| r.path == '/api/v1/environments/3/scope' }
    sent = lookups(requests).map { |r| r['scope'] }
    assert_equal [{ 'role' => 'db', '::fqdn' => 'n1', 'calling_class' => 'c' }] * 2, sent
  end

  # The hierarchy is registered once per configuration, even by threads
  # that start together; every lookup names it by the id answered.
  def test_the_hierarchy_is_registered_once_and_named_by_id
    h = hiera
    threads = Array.new(4) { |i| Thread.new { h.lookup("k#{i}", 'd', SCOPE) } }
    threads.each(&:join)
    h.lookup('k', 'd', SCOPE)
    requests = @server.request_list
    registered = requests.select { |r| r.path == REGISTER }
    assert_equal 1, registered.size
    sent = lookups(requests)
    assert_equal 5, sent.size
    assert_equal [id_of(registered.first.body)] * 5, sent.map { |s| s['hierarchy_id'] }
    assert(sent.none? { |s| s.key?('hierarchy') })
    # Another configuration (another hierarchy): registered too.
    hiera(hierarchy: ['common']).lookup('k', 'd', SCOPE)
    assert_equal [{ 'hierarchy' => ['common'] }], registrations.map { |r| JSON.parse(r.body) }
  end

  # Threads that start together on a new configuration build its state
  # once, so the hierarchy is registered once (each used to build its own
  # and register again; a build made slow here widens the window).
  module SlowBuild
    DELAY = [0.0]
    def build(key)
      sleep DELAY[0]
      super
    end
  end
  Hiera::Backend::Hierad_backend.prepend(SlowBuild)

  def test_threads_starting_together_register_once
    h = hiera
    SlowBuild::DELAY[0] = 0.05
    threads = Array.new(8) { |i| Thread.new { h.lookup("k#{i}", 'd', SCOPE) } }
    threads.each(&:join)
    requests = @server.request_list
    assert_equal 1, requests.count { |r| r.path == REGISTER }
    assert_equal 8, lookups(requests).size
  ensure
    SlowBuild::DELAY[0] = 0.0
  end

  # Hiera makes its backend with an unlocked `||=`, so threads starting
  # together on a fresh Hiera can make two instances (CI saw it: two
  # registrations from eight threads); they share one registration.
  def test_two_backend_instances_register_once
    hiera
    backends = Array.new(2) { Hiera::Backend::Hierad_backend.new }
    backends.each_with_index { |b, i| catch(:no_such_key) { b.lookup("k#{i}", SCOPE, nil, nil, {}) } }
    requests = @server.request_list
    assert_equal 1, requests.count { |r| r.path == REGISTER }
    assert_equal 2, lookups(requests).size
  end

  # 409: the server does not hold the id (restarted, another replica, the
  # list dropped). The backend registers again and retries once; a second
  # 409 is an error naming the server.
  def test_a_conflict_registers_again_and_retries_once
    h = hiera
    answer('{"found":true,"value":1}')
    assert_equal 1, h.lookup('k', nil, SCOPE)
    unknown = '{"error":"conflict","message":"hierarchy_id x is not registered on this server"}'
    answer(unknown, 409)
    answer('{"found":true,"value":2}')
    assert_equal 2, h.lookup('k', nil, SCOPE)
    requests = @server.request_list
    assert_equal [REGISTER, '/api/v1/lookup', '/api/v1/lookup', REGISTER, '/api/v1/lookup'],
                 requests.reject { |r| r.path.end_with?('/scope') }.map(&:path)
    sent = lookups(requests)
    assert_equal 1, sent.map { |s| s['hierarchy_id'] }.uniq.size
    assert_equal sent[1], sent[2], 'the same request, sent again'

    answer(unknown, 409)
    answer(unknown, 409)
    error = assert_raises(PuppetX::Hierad::Error) { h.lookup('k', 'default', SCOPE) }
    assert_includes error.message, @server.url
    assert_includes error.message, 'HTTP 409'
    assert_includes error.message, 'is not registered on this server'
    assert_equal 1, registrations.size
    # The next lookup works again.
    answer('{"found":true,"value":3}')
    assert_equal 3, h.lookup('k', nil, SCOPE)
  end

  # Any other refusal of the registration is an error naming the server.
  def test_a_refused_registration_is_an_error
    @registrations << [403, {}, '{"error":"forbidden","message":"reader may not"}']
    error = assert_raises(PuppetX::Hierad::Error) { hiera.lookup('k', 'default', SCOPE) }
    assert_includes error.message, @server.url
    assert_includes error.message, 'reader may not'
    assert_empty lookups
  end

  # failure: stale answers through an outage, also one met while
  # registering again after a 409; a refused registration is no outage.
  def test_stale_answers_survive_a_conflict_but_not_a_refusal
    h = hiera(hierad: { url: @server.url, environment: 1, failure: 'stale' })
    answer('{"found":true,"value":"fresh"}')
    assert_equal 'fresh', h.lookup('k', nil, SCOPE)
    answer('{"error":"conflict","message":"not registered"}', 409)
    @registrations << [403, {}, '{"error":"forbidden","message":"reader may not"}']
    error = assert_raises(PuppetX::Hierad::Error) { h.lookup('k', 'default', SCOPE) }
    assert_includes error.message, 'reader may not'
    answer('{"error":"conflict","message":"not registered"}', 409)
    # Closed without an answer: on the kept connection, then on the fresh
    # one the client retries with.
    @registrations << :close << :close
    assert_equal 'fresh', h.lookup('k', nil, SCOPE)
  end
end
