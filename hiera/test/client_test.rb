# The HTTP client (lib/puppet_x/hierad/client.rb) against scripted servers.
require_relative 'test_helper'
require 'tmpdir'

class ClientTest < Minitest::Test
  Client = PuppetX::Hierad::Client

  def setup
    @servers = []
  end

  def teardown
    @servers.each(&:stop)
  end

  def server(tls: nil, &block)
    s = FakeServer.new(tls: tls, &block)
    @servers << s
    s
  end

  # A port nothing listens on.
  def dead_url
    s = TCPServer.new('127.0.0.1', 0)
    port = s.addr[1]
    s.close
    "http://127.0.0.1:#{port}"
  end

  def test_keep_alive_reuses_one_connection
    s = server { |req| [200, {}, JSON.generate('path' => req.path)] }
    client = Client.new(url: s.url)
    20.times do |i|
      r = client.get("/x/#{i}")
      assert_equal 200, r.status
      assert_equal "/x/#{i}", JSON.parse(r.body)['path']
    end
    assert_equal 1, s.connections
  end

  # A pause (between two compiles) does not cost a new connection.
  def test_keep_alive_outlasts_a_pause
    s = server { |_req| [200, {}, '{}'] }
    client = Client.new(url: s.url)
    client.get('/')
    sleep 2.5 # longer than Net::HTTP keeps an idle session by default
    client.get('/')
    assert_equal 1, s.connections
  end

  def test_posts_send_the_body_and_headers
    s = server { |_req| [200, {}, '{}'] }
    Client.new(url: "#{s.url}/base/", token: 's3cret').post('/api', '{"k":"é"}')
    req = s.request_list.first
    assert_equal ['POST', '/base/api', '{"k":"é"}'], [req.method, req.path, req.body.force_encoding('UTF-8')]
    assert_equal 'Bearer s3cret', req.headers['authorization']
    assert_equal 'application/json', req.headers['content-type']
    assert_equal "127.0.0.1:#{s.port}", req.headers['host']
  end

  def test_basic_credentials
    s = server { |_req| [200, {}, '{}'] }
    Client.new('url' => s.url, 'user' => 'puppet', 'password' => 'p:w').get('/')
    assert_equal "Basic #{['puppet:p:w'].pack('m0')}", s.request_list.first.headers['authorization']
  end

  # Credentials from files (hiera.yaml is readable by everyone): the
  # first line of each, sent as its setting would be.
  def test_credentials_from_files
    s = server { |_req| [200, {}, '{}'] }
    Dir.mktmpdir do |dir|
      write = ->(name, text) { File.join(dir, name).tap { |p| File.write(p, text) } }
      Client.new(url: s.url, token_file: write.call('t', "tok-1\nignored\n")).get('/')
      Client.new(url: s.url, user: 'puppet', password_file: write.call('p', "p w:1\r\n")).get('/')
      Client.new(url: s.url, keystone_token_file: write.call('k', 'ks-9')).get('/')
      sent = s.request_list.map(&:headers)
      assert_equal ['Bearer tok-1', "Basic #{['puppet:p w:1'].pack('m0')}"], sent[0, 2].map { |h| h['authorization'] }
      assert_equal 'ks-9', sent[2]['x-auth-token']

      refusals = {
        { token: 'x', token_file: write.call('t2', 'y') } => 'give token or token_file, not both',
        { password_file: write.call('p2', 'pw') } => 'password_file goes with user',
        { token_file: write.call('e', "\n") } => 'is empty',
        { token_file: File.join(dir, 'absent') } => 'cannot read token_file',
        { token_file: dir } => 'is not a regular file',
        { token_file: File.join(dir, 'fifo').tap { |f| File.mkfifo(f) } } => 'is not a regular file'
      }
      refusals.each do |options, says|
        error = assert_raises(PuppetX::Hierad::Error) { Client.new(options.merge(url: s.url)) }
        assert_includes error.message, says
      end
      assert_equal "hierad: cannot read token_file #{dir}/absent: No such file or directory",
                   assert_raises(PuppetX::Hierad::Error) { Client.new(url: s.url, token_file: "#{dir}/absent") }.message
    end
  end

  # A 401 to a token from a file: the file is read again and, rotated,
  # the request sent once more with the new token; unchanged, the 401
  # is the answer.
  def test_a_rotated_token_file_is_read_again_after_a_401
    valid = ['old']
    s = server do |req|
      valid.include?(req.headers['authorization'].to_s.delete_prefix('Bearer ')) ? [200, {}, '{}'] : [401, {}, '{"message":"no"}']
    end
    Dir.mktmpdir do |dir|
      file = File.join(dir, 'token')
      File.write(file, "old\n")
      client = Client.new(url: s.url, token_file: file)
      assert_equal 200, client.get('/').status
      valid.replace(['new'])
      assert_equal 401, client.get('/').status
      File.write(file, "new\n")
      threads = Array.new(4) { Thread.new { client.get('/').status } }
      assert_equal [200] * 4, threads.map(&:value)
      tokens = s.request_list.map { |r| r.headers['authorization'] }
      assert_equal ['Bearer old'] * 2, tokens[0, 2], 'unchanged: no second request'
      # Each thread: the new token once, after the old one (401) or not.
      sent = tokens.drop(2).tally
      assert_equal 4, sent['Bearer new']
      assert_operator sent.fetch('Bearer old', 0), :<=, 4
      assert_equal 4 + sent.fetch('Bearer old', 0), tokens.size - 2
    end
  end

  # hierad's throttle (429, credentials unchecked): a Retry-After within
  # the read timeout is waited for once; a longer one, or a second 429,
  # is the answer.
  def test_a_throttled_request_waits_its_turn_once
    answers = [[429, { 'Retry-After' => '1' }, '{"message":"too many failed authentications"}'],
               [200, {}, '"ok"']]
    s = server { |_req| answers.shift || [429, { 'Retry-After' => '60' }, '{}'] }
    client = Client.new(url: s.url, read_timeout: 5)
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    assert_equal '"ok"', client.get('/').body
    assert_operator Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, :>=, 0.9
    assert_equal 2, s.request_list.size
    # Beyond the read timeout: not waited for.
    assert_equal 429, client.get('/').status
    assert_equal 1, s.request_list.size
    answers.replace([[429, { 'Retry-After' => '1' }, '{}']])
    assert_equal 429, client.get('/').status, 'once'
    assert_equal 2, s.request_list.size
  end

  # hierad busy (503, Retry-After: a memory bound is full): waited for
  # once, as a 429 is; a second one is the answer.
  def test_a_busy_server_is_retried_once_after_its_retry_after
    answers = [[503, { 'Retry-After' => '1' }, '{"error":"busy","message":"retry in a moment"}'],
               [200, {}, '"ok"']]
    s = server { |_req| answers.shift || [503, { 'Retry-After' => '60' }, '{}'] }
    client = Client.new(url: s.url, read_timeout: 5)
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    assert_equal '"ok"', client.get('/').body
    assert_operator Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, :>=, 0.9
    assert_equal 2, s.request_list.size
    # Beyond the read timeout, or without Retry-After: a failed server,
    # as before.
    assert_raises(PuppetX::Hierad::Error) { client.get('/') }
    assert_equal 1, s.request_list.size
    answers.replace([[503, {}, '{}']])
    assert_raises(PuppetX::Hierad::Error) { client.get('/') }
    assert_equal 1, s.request_list.size
    answers.replace([[503, { 'Retry-After' => '1' }, '{}']] * 3)
    assert_equal 503, client.get('/').status, 'once'
    assert_equal 2, s.request_list.size
  end

  def test_credentials_in_a_url_are_refused_unrepeated
    error = assert_raises(PuppetX::Hierad::Error) { Client.new(url: 'https://puppet:Pw-in-url9@127.0.0.1:8750') }
    assert_includes error.message, 'holds credentials'
    refute_includes error.message, 'Pw-in-url9'
    # An '@' after the host is the path's, not a user.
    assert_equal ['http://127.0.0.1:1/a@b'], Client.new(url: 'http://127.0.0.1:1/a@b').urls
  end

  def test_chunked_and_close_delimited_bodies
    s = server do |req|
      case req.path
      when '/chunked' then [200, { 'Transfer-Encoding' => 'chunked' }, "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"]
      when '/close' then [200, { 'Connection' => 'close' }, 'bye']
      else [204, {}, '']
      end
    end
    client = Client.new(url: s.url)
    assert_equal 'hello world', client.get('/chunked').body
    assert_equal 'bye', client.get('/close').body
    assert_equal 204, client.get('/after').status
    assert_equal 2, s.connections, 'a closed connection is replaced, a kept one reused'
  end

  # hierad always sends a Content-Length or chunked encoding: an answer
  # that ends with its connection (HTTP/1.0's form) is refused, named.
  def test_a_body_delimited_by_the_close_is_refused
    listener = TCPServer.new('127.0.0.1', 0)
    Thread.new do
      sock = listener.accept
      nil until sock.gets == "\r\n"
      sock.write("HTTP/1.1 200 OK\r\n\r\nbye")
      sock.close
    end
    error = assert_raises(PuppetX::Hierad::Error) { Client.new(url: "http://127.0.0.1:#{listener.addr[1]}").get('/') }
    assert_includes error.message, 'neither Content-Length nor chunked encoding'
  ensure
    listener&.close
  end

  def test_a_keep_alive_connection_closed_by_the_server_is_retried
    count = 0
    s = server do |_req|
      count += 1
      # The second request finds its connection closed, as after an idle timeout.
      count == 2 ? :close : [200, {}, JSON.generate(count)]
    end
    client = Client.new(url: s.url)
    assert_equal '1', client.get('/').body
    assert_equal '3', client.get('/').body
    assert_equal 2, s.connections
  end

  def test_failover_in_order_and_sticky
    s = server { |_req| [200, {}, '"second"'] }
    dead = dead_url
    client = Client.new(url: [dead, s.url])
    assert_equal '"second"', client.get('/').body
    assert_equal '"second"', client.get('/').body
    assert_equal 1, s.connections
    assert_equal [dead, s.url], client.urls
  end

  def test_every_server_down_names_every_server
    a = dead_url
    b = dead_url
    error = assert_raises(PuppetX::Hierad::Error) { Client.new(url: [a, b]).post('/api/v1/lookup', '{}') }
    assert_includes error.message, "#{a}: "
    assert_includes error.message, "#{b}: "
    assert_includes error.message, 'Connection refused'
  end

  def test_server_errors_fail_over_and_are_reported
    broken = server { |_req| [503, {}, '{"error":"unavailable","message":"database is locked"}'] }
    good = server { |_req| [200, {}, '"ok"'] }
    assert_equal '"ok"', Client.new(url: [broken.url, good.url]).get('/').body
    error = assert_raises(PuppetX::Hierad::Error) { Client.new(url: broken.url).get('/') }
    assert_includes error.message, 'HTTP 503: database is locked'
  end

  def test_client_errors_are_answers
    s = server { |_req| [404, {}, '{"error":"not_found","message":"environment 9 does not exist"}'] }
    r = Client.new(url: s.url).get('/')
    assert_equal [404, 'environment 9 does not exist'], [r.status, r.error_message]
  end

  def test_read_timeout
    s = server { |_req| :hang }
    error = assert_raises(PuppetX::Hierad::Error) { Client.new(url: s.url, read_timeout: 0.3).get('/') }
    assert_match(/read timed out after 0\.3s/, error.message)
    assert_includes error.message, s.url
  end

  def test_connect_timeout
    hole = BlackHole.new
    t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    error = assert_raises(PuppetX::Hierad::Error) { Client.new(url: hole.url, connect_timeout: 0.3).get('/') }
    waited = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
    assert_includes error.message, "#{hole.url}: connect timed out after 0.3s"
    assert_operator waited, :<, 2.0, 'the default connect timeout (2 s) was used'
  ensure
    hole&.close
  end

  # An unreachable first server costs one connect timeout, then the next
  # URL answers; later requests go straight to the one that answered.
  def test_failover_past_a_server_that_does_not_accept
    hole = BlackHole.new
    s = server { |_req| [200, {}, '"up"'] }
    client = Client.new(url: [hole.url, s.url], connect_timeout: 0.3)
    assert_equal '"up"', client.get('/').body
    # Counted, not timed (the machine may be slow): no request goes to the hole.
    tries = 0
    client.instance_variable_get(:@endpoints).first.define_singleton_method(:request) do |*args|
      tries += 1
      super(*args)
    end
    5.times { assert_equal '"up"', client.get('/').body }
    assert_equal 0, tries
  ensure
    hole&.close
  end

  def test_bad_settings
    Dir.mktmpdir do |dir|
      fifo = File.join(dir, 'ca.pem').tap { |f| File.mkfifo(f) }
      error = assert_raises(PuppetX::Hierad::Error) { Client.new(url: 'https://x', ca_file: fifo) }
      assert_equal "hierad: ca_file #{fifo} is not a regular file", error.message
    end
    assert_raises(PuppetX::Hierad::Error) { Client.new({}) }
    assert_raises(PuppetX::Hierad::Error) { Client.new(url: 'ftp://x') }
    assert_raises(PuppetX::Hierad::Error) { Client.new(url: 'http://x', read_timeout: 'soon') }
    assert_equal ['http://[::1]:8750'], Client.new(url: 'http://[::1]:8750/').urls
  end

  def test_tls_with_a_ca_file
    Dir.mktmpdir do |dir|
      ctx, ca_file = TestTLS.context_and_ca_file(dir)
      s = server(tls: ctx) { |req| [200, {}, JSON.generate(req.path)] }
      # A first handshake under JRuby on a busy machine can take over the
      # default 2 s.
      client = Client.new(url: s.url, ca_file: ca_file, connect_timeout: 20)
      assert_equal '"/a"', client.get('/a').body
      assert_equal '"/b"', client.get('/b').body
      assert_equal 1, s.connections
      error = assert_raises(PuppetX::Hierad::Error) { Client.new(url: s.url, connect_timeout: 20).get('/') }
      assert_match(/TLS: .*certificate verify failed/, error.message)
      # The CA went into the client's own store, not Ruby's (and Puppet's) default one.
      refute OpenSSL::SSL::SSLContext::DEFAULT_CERT_STORE.verify(OpenSSL::X509::Certificate.new(File.read(ca_file)))
    end
  end

  def test_threads_share_a_client_safely
    s = server { |req| [200, {}, req.body] }
    client = Client.new(url: s.url)
    bad = Queue.new
    threads = 8.times.map do |t|
      Thread.new do
        50.times do |i|
          body = JSON.generate('thread' => t, 'i' => i, 'pad' => 'x' * (i * 97))
          got = client.post('/echo', body).body
          bad << [t, i] unless got == body
        end
      end
    end
    threads.each(&:join)
    assert bad.empty?, "answers crossed between threads: #{bad.size}"
    assert_operator s.connections, :<=, 8
  end
end
