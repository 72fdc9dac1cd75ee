# What the Hiera 5 functions do over HTTP (lib/puppet_x/hierad/hiera5.rb),
# against a scripted server. Puppet itself runs them in tests/oracle/shim.
require_relative 'test_helper'
require 'puppet'
require 'puppet_x/hierad/hiera5'

class Hiera5Test < Minitest::Test
  H5 = PuppetX::Hierad::Hiera5
  LookupError = Puppet::DataBinding::LookupError

  def setup
    @replies = {}
    @server = FakeServer.new do |req|
      reply = @replies[req.path]
      reply = reply.call(req) if reply.respond_to?(:call)
      reply || [404, {}, '{"error":"not_found","message":"no reply scripted"}']
    end
  end

  def teardown
    @server.stop
  end

  def options(extra = {})
    { 'url' => @server.url, 'environment' => 3, 'level' => 'nodes=n1', 'uri' => 'override/node/n1' }.merge(extra)
  end

  DATA_PATH = '/api/v1/data/3/override/node/n1?level=nodes%3Dn1'.freeze

  def test_data_hash_revalidates_with_its_etag
    body = PuppetX::Hierad::Wire.dump({ 'a' => 1, :sym_key => { 'n' => :v }, 2 => 'x' })
    @replies[DATA_PATH] = lambda do |req|
      req.headers['if-none-match'] == '"e1"' ? [304, { 'ETag' => '"e1"' }, ''] : [200, { 'ETag' => '"e1"' }, body]
    end
    first = H5.data_hash(options)
    # Symbol keys become Strings, as yaml_data makes them.
    assert_equal({ 'a' => 1, 'sym_key' => { 'n' => :v }, 2 => 'x' }, first)
    second = H5.data_hash(options)
    assert_same first, second
    requests = @server.request_list
    assert_equal [nil, '"e1"'], requests.map { |r| r.headers['if-none-match'] }
  end

  def test_a_datasource_nobody_wrote_is_empty
    @replies[DATA_PATH] = [404, {}, '{"error":"not_found","message":"resource \"override/node/n1\" is not defined in environment 3 (it defines: astute)"}']
    assert_equal({}, H5.data_hash(options))
  end

  def test_other_refusals_are_lookup_errors_naming_the_server
    @replies[DATA_PATH] = [404, {}, '{"error":"not_found","message":"environment 3 does not exist"}']
    error = assert_raises(LookupError) { H5.data_hash(options) }
    assert_includes error.message, @server.url
    assert_includes error.message, 'environment 3 does not exist'
  end

  # The server's 422 for a kept file, with Puppet's reading of it
  # (`puppet` an error, or `warning:` one) as src/hiera5/kept.rs words it.
  def unparsed(path, klass, message, puppet)
    body = { 'error' => 'unparsed_document', 'message' => "… holds #{path} as imported, which does not parse: …",
             'hiera_class' => klass, 'hiera_message' => message, 'path' => path }
    body[puppet.start_with?('warning: ') ? 'puppet_warning' : 'puppet_error'] = puppet.delete_prefix('warning: ')
    [422, {}, JSON.generate(body)]
  end

  # A kept file fails as yaml_data or json_data fail over it.
  def test_a_file_that_does_not_parse_fails_as_over_the_file
    syntax = "(<unknown>): did not find expected ',' or ']' while parsing a flow sequence at line 1 column 4"
    @replies[DATA_PATH] = unparsed('data/n1.yaml', 'Psych::SyntaxError', syntax,
                                   "Unable to parse (data/n1.yaml): did not find expected ',' or ']' while parsing a flow sequence at line 1 column 4")
    error = assert_raises(LookupError) { H5.data_hash(options) }
    assert_equal "Unable to parse (data/n1.yaml): did not find expected ',' or ']' while parsing a flow sequence at line 1 column 4", error.message
    @replies[DATA_PATH] = unparsed('data/n1.json', 'TypeError', 'Data retrieved from data/n1.json is Array not Hash',
                                   "Value returned from data_hash function 'json_data', when using location 'data/n1.json', has wrong type, expects a Hash value, got Array")
    error = assert_raises(LookupError) { H5.data_hash(options) }
    assert_equal "Value returned from data_hash function 'json_data', when using location 'data/n1.json', has wrong type, expects a Hash value, got Array",
                 error.message
  end

  # yaml_data warns of a YAML file that holds no Hash, and reads it as empty.
  def test_a_yaml_file_that_is_no_hash_warns_and_is_empty
    @replies[DATA_PATH] = unparsed('data/n1.yaml', 'TypeError', 'Data retrieved from data/n1.yaml is Array not Hash',
                                   'warning: data/n1.yaml: file does not contain a valid yaml hash')
    warnings = []
    Puppet.stub(:warning, ->(w) { warnings << w }) do
      assert_equal({}, H5.data_hash(options))
    end
    assert_equal ['data/n1.yaml: file does not contain a valid yaml hash'], warnings
  end

  def test_an_outage_is_an_error_or_the_last_copy_when_stale_is_allowed
    @replies[DATA_PATH] = [200, { 'ETag' => '"e2"' }, '{"k":"v"}']
    stale = options('failure' => 'stale', 'url' => [@server.url])
    assert_equal({ 'k' => 'v' }, H5.data_hash(stale))
    @server.stop
    assert_equal({ 'k' => 'v' }, H5.data_hash(stale))
    error = assert_raises(LookupError) { H5.data_hash(options('uri' => 'other')) }
    assert_match(/no server answered GET .*Connection refused/, error.message)
  end

  # Credentials and timeouts among the options reach the client.
  def test_credentials_and_timeouts_from_the_options
    @replies[DATA_PATH] = [200, {}, '{}']
    H5.data_hash(options('token' => 't1'))
    H5.data_hash(options('user' => 'puppet', 'password' => 'pw'))
    assert_equal ['Bearer t1', "Basic #{['puppet:pw'].pack('m0')}"], @server.request_list.map { |r| r.headers['authorization'] }
    @replies[DATA_PATH] = :hang
    error = assert_raises(LookupError) { H5.data_hash(options('read_timeout' => 0.3)) }
    assert_includes error.message, "#{@server.url}: read timed out after 0.3s"
  end

  def test_options_are_checked
    assert_raises(LookupError) { H5.data_hash(options('url' => nil)) }
    assert_raises(LookupError) { H5.data_hash(options('environment' => nil)) }
    assert_raises(LookupError) { H5.data_hash(options('uri' => nil)) }
    assert_raises(LookupError) { H5.data_hash(options('failure' => 'graceful')) }
    error = assert_raises(LookupError) { H5.data_hash(options('uris' => ['x'])) }
    assert_includes error.message, 'unknown option(s) uris'
  end
end
