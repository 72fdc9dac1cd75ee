# Shared by the shim's tests: minitest, the shim on the load path, and a
# scripted HTTP/1.1 server on 127.0.0.1:0 (plain or TLS) that records what
# it receives. Run all tests with:
#   ruby -Ihiera/lib -Ihiera/test -e 'Dir["hiera/test/*_test.rb"].each { |f| require File.expand_path(f) }'
$LOAD_PATH.unshift(File.expand_path('../lib', __dir__))
require 'minitest/autorun'
require 'socket'
require 'json'
require 'openssl'
require 'puppet_x/hierad/client'

class FakeServer
  # One request as the server read it.
  Request = Struct.new(:method, :path, :headers, :body)

  attr_reader :requests, :connections, :port

  # The block gets each Request and returns [status, headers, body] or
  # :hang (never answer), :close (close without answering).
  def initialize(tls: nil, &handler)
    @handler = handler || ->(_req) { [200, {}, '{}'] }
    @requests = Queue.new
    @connections = 0
    @server = TCPServer.new('127.0.0.1', 0)
    @port = @server.addr[1]
    @tls = tls
    @threads = []
    @acceptor = Thread.new { accept_loop }
  end

  def url
    "#{@tls ? 'https' : 'http'}://127.0.0.1:#{@port}"
  end

  def request_list
    list = []
    list << @requests.pop until @requests.empty?
    list
  end

  # Stops accepting and closes every connection before it returns (a
  # killed thread may run on for a moment, JRuby's especially).
  def stop
    @acceptor.kill
    @acceptor.join(2)
    @threads.each(&:kill)
    @threads.each { |t| t.join(2) }
    @server.close
  end

  private

  def accept_loop
    loop do
      sock = @server.accept
      @connections += 1
      if @tls
        sock = OpenSSL::SSL::SSLSocket.new(sock, @tls)
        sock.sync_close = true
        begin
          sock.accept
        rescue OpenSSL::SSL::SSLError, IOError, SystemCallError
          sock.close
          next
        end
      end
      @threads << Thread.new(sock) { |s| serve(s) }
    end
  rescue IOError, SystemCallError
    nil
  end

  def serve(sock)
    loop do
      line = sock.gets or break
      method, path, = line.split(' ')
      headers = {}
      while (h = sock.gets) && h != "\r\n"
        name, value = h.split(':', 2)
        headers[name.downcase] = value.strip
      end
      body = sock.read(headers['content-length'].to_i)
      req = Request.new(method, path, headers, body)
      @requests << req
      reply = @handler.call(req)
      break if reply == :close
      if reply == :hang
        sleep 5
        break
      end
      status, extra, text = reply
      head = +"HTTP/1.1 #{status} X\r\n"
      extra.each { |k, v| head << "#{k}: #{v}\r\n" }
      head << "Content-Length: #{text.bytesize}\r\n" unless extra.keys.map(&:downcase).include?('transfer-encoding')
      sock.write("#{head}\r\n#{text}")
      break if extra.any? { |k, v| k.casecmp?('connection') && v == 'close' }
    end
  rescue IOError, SystemCallError, OpenSSL::SSL::SSLError
    nil
  ensure
    sock.close rescue nil
  end
end

# A port whose listen queue is full: the kernel drops new SYNs, so a
# connect hangs until the client's own timeout (what an unreachable host
# does, without needing one).
class BlackHole
  def initialize
    @listener = TCPServer.new('127.0.0.1', 0)
    @listener.listen(0)
    @port = @listener.addr[1]
    # Fills the queue (MRI: one; JRuby keeps its own backlog of 50); later
    # connects get no answer. Bounded: the first connect that does not
    # complete within a moment proves it full.
    @held = []
    100.times do
      @held << Socket.tcp('127.0.0.1', @port, connect_timeout: 0.2)
    rescue Errno::ETIMEDOUT
      break
    end
  end

  def url
    "http://127.0.0.1:#{@port}"
  end

  def close
    @held.each(&:close)
    @listener.close
  end
end

# A self-signed certificate for 127.0.0.1, written to a CA file.
module TestTLS
  module_function

  def context_and_ca_file(dir)
    key = OpenSSL::PKey::RSA.new(2048)
    cert = OpenSSL::X509::Certificate.new
    cert.version = 2
    cert.serial = 1
    cert.subject = cert.issuer = OpenSSL::X509::Name.parse('/CN=127.0.0.1')
    cert.public_key = key.public_key
    cert.not_before = Time.now - 60
    cert.not_after = Time.now + 3600
    ef = OpenSSL::X509::ExtensionFactory.new(cert, cert)
    cert.add_extension(ef.create_extension('subjectAltName', 'IP:127.0.0.1', false))
    cert.add_extension(ef.create_extension('basicConstraints', 'CA:TRUE', true))
    cert.sign(key, OpenSSL::Digest.new('SHA256'))
    ctx = OpenSSL::SSL::SSLContext.new
    ctx.cert = cert
    ctx.key = key
    path = File.join(dir, 'ca.pem')
    File.write(path, cert.to_pem)
    [ctx, path]
  end
end
