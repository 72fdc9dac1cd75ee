# The shim's HTTP/1.1 transport, written for it (socket and openssl):
# persistent connections (plain or TLS) with connect and read deadlines,
# pooled per server URL and handed to one thread at a time. It makes a
# lookup about twice as fast as Net::HTTP (bench/LOG.md, "The shim's HTTP
# client").
require 'socket'
require_relative 'wire'

module PuppetX::Hierad
  # One HTTP response: status, headers (lower-case names), body.
  Response = Struct.new(:status, :headers, :body) do
    # hierad's JSON error body; {} when the body is not one.
    def error
      parsed = JSON.parse(body) rescue nil # rubocop:disable Style/RescueModifier
      parsed.is_a?(Hash) ? parsed : {}
    end

    # The error body's `message`, or the start of the text.
    def error_message
      error['message'] || body.strip[0, 300]
    end
  end

  # A failure of one connection. `fresh`: nothing of a response arrived,
  # so a reused keep-alive connection the server had closed may be retried.
  TransportError = Class.new(Error) { attr_accessor :fresh }

  # One persistent HTTP/1.1 connection (plain or TLS). Not thread-safe on
  # its own: an Endpoint hands it to one thread at a time.
  class Connection
    READ_SIZE = 65_536
    attr_accessor :reused # set when taken from the idle pool

    def initialize(endpoint)
      @ep = endpoint
      @buf = String.new(capacity: READ_SIZE, encoding: Encoding::BINARY)
      @sock = open_socket
    end

    def close
      sock, @sock = @sock, nil
      sock&.close
    rescue IOError, SystemCallError # closed already: nothing to do
    end

    def closed?
      @sock.nil?
    end

    # Sends one request (head already built) and reads the response.
    def request(head, body)
      begin
        @sock.write(body.empty? ? head : head + body)
      rescue StandardError => e # socket and TLS errors alike
        failed("write failed: #{e.message}", fresh: true)
      end
      read_response(now + @ep.read_timeout)
    end

    private

    def open_socket
      tcp = Socket.tcp(@ep.host, @ep.port, connect_timeout: @ep.connect_timeout)
      tcp.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, 1)
      @ep.tls ? start_tls(tcp) : tcp
    rescue Errno::ETIMEDOUT
      failed("connect timed out after #{@ep.connect_timeout}s")
    rescue SocketError, SystemCallError => e
      failed(e.message)
    end

    def start_tls(tcp)
      ctx = @ep.ssl_context # first: it loads openssl, which `hiera` has not
      ssl = OpenSSL::SSL::SSLSocket.new(tcp, ctx)
      ssl.hostname = @ep.host
      ssl.sync_close = true
      deadline = now + @ep.connect_timeout
      while (state = ssl.connect_nonblock(exception: false)).is_a?(Symbol)
        wait(ssl, state, deadline, 'TLS handshake')
      end
      ssl.post_connection_check(@ep.host)
      ssl
    rescue OpenSSL::SSL::SSLError, SystemCallError, IOError => e
      tcp.close
      failed("TLS: #{e.message}")
    end

    def now
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end

    def wait(io, state, deadline, doing)
      left = deadline - now
      return if left.positive? && (state == :wait_readable ? IO.select([io], nil, nil, left) : IO.select(nil, [io], nil, left))

      io.close unless io.closed?
      failed("#{doing} timed out after #{doing == 'read' ? @ep.read_timeout : @ep.connect_timeout}s")
    end

    def failed(message, fresh: false)
      close
      raise TransportError.new(message).tap { |e| e.fresh = fresh }
    end

    # Reads more bytes into @buf; false at end of stream.
    def fill(deadline)
      while (chunk = @sock.read_nonblock(READ_SIZE, exception: false)).is_a?(Symbol)
        wait(@sock, chunk, deadline, 'read')
      end
      chunk && @buf << chunk
    rescue StandardError => e
      raise if e.is_a?(TransportError) # a timeout's, already closed

      failed("read failed: #{e.message}", fresh: @buf.empty?)
    end

    # Reads until `pattern` is in @buf (its index), or `size` bytes are.
    # `head`: reading a response's head, which may not have begun.
    def fill_to(deadline, pattern: nil, size: nil, head: false)
      until pattern ? (at = @buf.index(pattern)) : @buf.bytesize >= size
        next if fill(deadline)

        fresh = head && @buf.empty?
        failed(fresh ? 'connection closed by the server' : 'connection closed in the middle of a response', fresh: fresh)
      end
      at || size
    end

    # The first `size` bytes of @buf, taken off with `skip` more.
    def take(size, skip = 0)
      part = @buf.byteslice(0, size)
      @buf = @buf.byteslice(size + skip, @buf.bytesize) || String.new(encoding: Encoding::BINARY)
      part
    end

    def read_response(deadline)
      lines = take(fill_to(deadline, pattern: "\r\n\r\n", head: true), 4).split("\r\n")
      status = lines[0][9, 3].to_i
      raise TransportError, "not an HTTP response: #{lines[0][0, 80].inspect}" unless lines[0].start_with?('HTTP/1.') && status >= 100

      headers = lines.drop(1).to_h { |l| l.split(':', 2).then { |k, v| [k.downcase, v.to_s.strip] } }
      body = if (len = headers['content-length']) then take(fill_to(deadline, size: len.to_i))
             elsif headers['transfer-encoding'].to_s.downcase.include?('chunked') then read_chunked(deadline)
             elsif [204, 304].include?(status) then +''
             else failed('an answer with neither Content-Length nor chunked encoding, which no hierad server sends')
             end
      close if headers['connection'].to_s.downcase == 'close'
      Response.new(status, headers, body.force_encoding(Encoding::UTF_8))
    end

    def read_chunked(deadline)
      body = String.new(encoding: Encoding::BINARY)
      until (size = take(fill_to(deadline, pattern: "\r\n"), 2).to_i(16)).zero?
        body << take(fill_to(deadline, size: size + 2) - 2, 2)
      end
      nil until take(fill_to(deadline, pattern: "\r\n"), 2).empty? # trailers end with an empty line
      body
    end
  end

  # One server URL and its idle keep-alive connections. Threads check a
  # connection out for one request, so they never share a socket.
  class Endpoint
    MAX_IDLE = 8
    # HTTP/1.1 header lines of a Hash.
    HEADER_LINES = ->(headers) { headers.map { |name, value| "#{name}: #{value}\r\n" }.join }
    # scheme, host (an IPv6 address in brackets), port, path. Parsed here
    # because `require 'uri'` costs a one-shot `hiera` run ~20 ms.
    URL = %r{\A(https?)://(\[[0-9A-Fa-f:.]+\]|[^/:\[\]@?#]+)(?::(\d+))?(/[^?#]*)?\z}.freeze

    attr_reader :url, :host, :port, :tls, :connect_timeout, :read_timeout

    def initialize(url, options)
      m = URL.match(url)
      # A user in the URL is refused without repeating it: its password
      # would go into every error, and Puppet's log with it.
      raise Error, 'hierad: a url holds credentials (user:password@host); give user: with password:, or token:' if !m && url =~ %r{\A[^/?#]*//[^/?#]*@}
      raise Error, "hierad: url #{url.inspect} is not an http:// or https:// URL (http://host:port)" unless m

      @url = url.chomp('/')
      @tls = m[1] == 'https'
      @host = m[2].delete_prefix('[').delete_suffix(']')
      @port = m[3] ? m[3].to_i : (@tls ? 443 : 80)
      @base_path = m[4].to_s.chomp('/')
      @host_line = "Host: #{@port == (@tls ? 443 : 80) ? m[2] : "#{m[2]}:#{@port}"}\r\n"
      @options = options
      @connect_timeout, @read_timeout = options.values_at(:connect_timeout, :read_timeout)
      self.headers = options[:headers]
      @idle, @mutex = [], Mutex.new
    end

    # The headers every request carries (credentials among them); set
    # again when the client reads rotated credentials.
    def headers=(headers)
      @fixed_headers = "#{@host_line}#{HEADER_LINES[headers]}"
    end

    # A store of our own: OpenSSL would load a ca_file into the
    # process-wide default store (shared with Puppet) otherwise. With
    # cert_file and key_file (PEM; a Puppet master's hostcert and
    # hostprivkey), a client certificate the server maps to a role.
    def ssl_context
      return @ssl_context if @ssl_context

      require 'openssl'
      store = OpenSSL::X509::Store.new
      @options[:ca_file] ? store.add_file(@options[:ca_file]) : store.set_default_paths
      ctx = OpenSSL::SSL::SSLContext.new
      ctx.set_params(verify_mode: OpenSSL::SSL::VERIFY_PEER, cert_store: store)
      cert, key = @options.values_at(:cert_file, :key_file)
      ctx.cert, ctx.key = OpenSSL::X509::Certificate.new(File.read(cert)), OpenSSL::PKey.read(File.read(key)) if cert
      @ssl_context = ctx
    rescue SystemCallError, OpenSSL::OpenSSLError => e
      files = @options.slice(:ca_file, :cert_file, :key_file).map { |k, v| "#{k} #{v}" }.join(', ')
      raise Error, "hierad: cannot use the TLS files (#{files}): #{e.message}"
    end

    # One request (headers a Hash, body a String); retried once on
    # a fresh connection when a reused one turns out to have been closed
    # by the server meanwhile. Raises Error saying what went wrong.
    def request(method, path, body, headers)
      head = "#{method} #{@base_path}#{path} HTTP/1.1\r\n#{@fixed_headers}#{HEADER_LINES[headers]}" \
             "Content-Length: #{body.bytesize}\r\n\r\n"
      conn = @mutex.synchronize { @idle.pop }&.tap { |c| c.reused = true } || Connection.new(self)
      begin
        response = conn.request(head, body)
      rescue TransportError => e
        raise unless e.fresh && conn.reused

        response = (conn = Connection.new(self)).request(head, body)
      end
      keep = !conn.closed? && @mutex.synchronize { @idle.size < MAX_IDLE && @idle.push(conn) }
      conn.close unless keep
      response
    end
  end
end
