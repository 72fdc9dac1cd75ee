# The shim's HTTP/1.1 transport, written for it (socket and openssl):
# persistent connections (plain or TLS) with connect and read deadlines,
# pooled per server URL and handed to one thread at a time. Measured
# against Net::HTTP in BENCHMARKS.md ("The shim's HTTP client").
require 'socket'
require 'io/wait'
require_relative 'wire'

module PuppetX
  module Hierad
    # One HTTP response: status, headers (lower-case names), body.
    Response = Struct.new(:status, :headers, :body) do
      # The `message` of hierad's JSON error bodies, or the start of the text.
      def error_message
        parsed = JSON.parse(body)
        parsed.is_a?(Hash) && parsed['message'] ? parsed['message'] : body
      rescue JSON::ParserError
        body.strip[0, 300]
      end
    end

    # Failures of one connection: Endpoint#request retries or reports them.
    class TransportError < StandardError
      # True when nothing of a response arrived, so a reused keep-alive
      # connection the server had already closed may be retried.
      attr_reader :before_response

      def initialize(message, before_response = false)
        super(message)
        @before_response = before_response
      end
    end

    # One persistent HTTP/1.1 connection (plain or TLS). Not thread-safe on
    # its own: an Endpoint hands it to one thread at a time.
    class Connection
      CRLF2 = "\r\n\r\n".freeze
      READ_SIZE = 65_536

      # Set when the connection is taken from the idle pool.
      attr_accessor :reused

      def initialize(endpoint)
        @endpoint = endpoint
        @buf = String.new(capacity: READ_SIZE, encoding: Encoding::BINARY)
        @reused = false
        @sock = open_socket
      end

      def close
        @sock&.close
      rescue IOError, SystemCallError
        nil
      ensure
        @sock = nil
      end

      def closed?
        @sock.nil?
      end

      # Sends one request (head already built, body a String) and reads the
      # response. Raises TransportError.
      def request(head, body)
        begin
          @sock.write(body.empty? ? head : head + body)
        rescue StandardError => e
          # Socket and TLS errors alike (OpenSSL's are StandardErrors).
          close
          raise TransportError.new("write failed: #{e.message}", true)
        end
        read_response
      end

      private

      def open_socket
        ep = @endpoint
        tcp = begin
          connect(ep)
        rescue Errno::ETIMEDOUT
          raise TransportError, "connect timed out after #{ep.connect_timeout}s"
        rescue SocketError, SystemCallError => e
          raise TransportError, e.message
        end
        tcp.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, 1)
        ep.tls? ? start_tls(tcp) : tcp
      end

      # JRuby's Socket.tcp reports a refused connection as EBADF ("Bad
      # file descriptor"); its TCPSocket.new reports it right but takes no
      # timeout, so Timeout bounds it there (as Net::HTTP does).
      if RUBY_ENGINE == 'jruby'
        require 'timeout'

        def connect(ep)
          Timeout.timeout(ep.connect_timeout, Errno::ETIMEDOUT) { TCPSocket.new(ep.host, ep.port) }
        end
      else
        def connect(ep)
          Socket.tcp(ep.host, ep.port, connect_timeout: ep.connect_timeout)
        end
      end

      def start_tls(tcp)
        ep = @endpoint
        ctx = ep.ssl_context # first: it loads openssl, which `hiera` has not
        ssl = OpenSSL::SSL::SSLSocket.new(tcp, ctx)
        ssl.hostname = ep.host
        ssl.sync_close = true
        deadline = now + ep.connect_timeout
        loop do
          case ssl.connect_nonblock(exception: false)
          when :wait_readable then wait(ssl, :read, deadline, 'TLS handshake')
          when :wait_writable then wait(ssl, :write, deadline, 'TLS handshake')
          else break
          end
        end
        ssl.post_connection_check(ep.host)
        ssl
      rescue OpenSSL::SSL::SSLError, SystemCallError, IOError => e
        tcp.close
        raise TransportError, "TLS: #{e.message}"
      rescue TransportError
        tcp.close
        raise
      end

      def now
        Process.clock_gettime(Process::CLOCK_MONOTONIC)
      end

      def wait(io, what, deadline, doing)
        left = deadline - now
        ready =
          if !left.positive? then false
          elsif io.is_a?(::IO) then what == :read ? io.wait_readable(left) : io.wait_writable(left)
          else what == :read ? IO.select([io], nil, nil, left) : IO.select(nil, [io], nil, left)
          end
        return if ready

        close
        io.close unless io.closed?
        raise TransportError, "#{doing} timed out after #{@endpoint.timeout_for(doing)}s"
      end

      # Reads more bytes into @buf; false at end of stream.
      def fill(deadline)
        loop do
          chunk = @sock.read_nonblock(READ_SIZE, exception: false)
          case chunk
          when :wait_readable then wait(@sock, :read, deadline, 'read')
          when :wait_writable then wait(@sock, :write, deadline, 'read')
          when nil then return false
          else
            @buf << chunk
            return true
          end
        end
      rescue TransportError
        raise
      rescue StandardError => e
        close
        raise TransportError.new("read failed: #{e.message}", @buf.empty?)
      end

      def read_response
        deadline = now + @endpoint.read_timeout
        until (head_end = @buf.index(CRLF2))
          next if fill(deadline)

          fresh = @buf.empty?
          close
          raise TransportError.new('connection closed by the server', fresh)
        end
        lines = @buf.byteslice(0, head_end).split("\r\n")
        status_line = lines.shift
        status = status_line[9, 3].to_i
        raise TransportError, "not an HTTP response: #{status_line[0, 80].inspect}" unless status_line.start_with?('HTTP/1.') && status >= 100

        headers = {}
        lines.each do |line|
          colon = line.index(':') or next
          headers[line[0, colon].downcase] = line[colon + 1..].strip
        end
        @buf = @buf.byteslice(head_end + 4, @buf.bytesize) || String.new(encoding: Encoding::BINARY)
        body =
          if (len = headers['content-length'])
            read_exact(len.to_i, deadline)
          elsif headers['transfer-encoding'].to_s.downcase.include?('chunked')
            read_chunked(deadline)
          elsif status == 204 || status == 304
            ''
          else
            read_to_end(deadline)
          end
        close if headers['connection'].to_s.downcase == 'close'
        Response.new(status, headers, body.force_encoding(Encoding::UTF_8))
      end

      def read_exact(len, deadline)
        while @buf.bytesize < len
          next if fill(deadline)

          close
          raise TransportError, 'connection closed in the middle of a response'
        end
        body = @buf.byteslice(0, len)
        @buf = @buf.byteslice(len, @buf.bytesize)
        body
      end

      def read_line(deadline)
        until (eol = @buf.index("\r\n"))
          next if fill(deadline)

          close
          raise TransportError, 'connection closed in the middle of a response'
        end
        line = @buf.byteslice(0, eol)
        @buf = @buf.byteslice(eol + 2, @buf.bytesize)
        line
      end

      def read_chunked(deadline)
        body = String.new(encoding: Encoding::BINARY)
        loop do
          size = read_line(deadline).to_i(16)
          if size.zero?
            # Trailers end with an empty line.
            nil until read_line(deadline).empty?
            return body
          end
          body << read_exact(size, deadline)
          read_line(deadline)
        end
      end

      def read_to_end(deadline)
        nil while fill(deadline)
        body = @buf
        @buf = String.new(encoding: Encoding::BINARY)
        close
        body
      end
    end

    # One server URL and its idle keep-alive connections. Threads check a
    # connection out for one request, so they never share a socket.
    class Endpoint
      MAX_IDLE = 8

      attr_reader :url, :host, :port, :base_path, :connect_timeout, :read_timeout

      # scheme, host (an IPv6 address in brackets), port, path. Parsed here
      # because `require 'uri'` costs a one-shot `hiera` run ~20 ms.
      URL = %r{\A(https?)://(\[[0-9A-Fa-f:.]+\]|[^/:\[\]@?#]+)(?::(\d+))?(/[^?#]*)?\z}.freeze

      def initialize(url, options)
        m = URL.match(url)
        # A user in the URL is refused without repeating it: its password
        # would go into every error, and Puppet's log with it.
        if !m && url =~ %r{\A[^/?#]*//[^/?#]*@}
          raise Error, 'hierad: a url holds credentials (user:password@host), which the shim does not send ' \
                       'and would print in its errors; give user: with password:, or token:'
        end
        raise Error, "hierad: url #{url.inspect} is not an http:// or https:// URL (http://host:port)" unless m

        @url = url.chomp('/')
        @tls = m[1] == 'https'
        default_port = @tls ? 443 : 80
        @host = m[2].delete_prefix('[').delete_suffix(']')
        @port = m[3] ? m[3].to_i : default_port
        @base_path = m[4].to_s.chomp('/')
        @connect_timeout = options.fetch(:connect_timeout)
        @read_timeout = options.fetch(:read_timeout)
        @ca_file = options[:ca_file]
        @cert_file = options[:cert_file]
        @key_file = options[:key_file]
        host_header = (@port == default_port ? m[2] : "#{m[2]}:#{@port}")
        @host_line = "Host: #{host_header}\r\n"
        self.headers = options[:headers]
        @idle = []
        @mutex = Mutex.new
      end

      def tls?
        @tls
      end

      # The headers every request carries (credentials among them); set
      # again when the client reads rotated credentials.
      def headers=(headers)
        @fixed_headers = "#{@host_line}#{head(headers)}"
      end

      def timeout_for(doing)
        doing == 'read' ? @read_timeout : @connect_timeout
      end

      def ssl_context
        @ssl_context ||= begin
          require 'openssl'
          # A store of our own: OpenSSL would load a ca_file into the
          # process-wide default store (shared with Puppet) otherwise.
          store = OpenSSL::X509::Store.new
          @ca_file ? store.add_file(@ca_file) : store.set_default_paths
          ctx = OpenSSL::SSL::SSLContext.new
          ctx.set_params(verify_mode: OpenSSL::SSL::VERIFY_PEER, cert_store: store)
          client_cert(ctx) if @cert_file
          ctx
        end
      end

      # The client certificate and key (PEM), e.g. the Puppet master's own
      # hostcert and hostprivkey, for a server that maps them to a role.
      def client_cert(ctx)
        ctx.cert = OpenSSL::X509::Certificate.new(File.read(@cert_file))
        ctx.key = OpenSSL::PKey.read(File.read(@key_file))
      rescue SystemCallError, OpenSSL::OpenSSLError => e
        raise Error, "hierad: cannot use the client certificate #{@cert_file} / #{@key_file}: #{e.message}"
      end

      # One request (headers a Hash, body a String or nil); retried once on
      # a fresh connection when a reused one turns out to have been closed
      # by the server meanwhile. Raises Error saying what went wrong.
      def request(method, path, body, headers)
        body ||= ''
        head = "#{method} #{@base_path}#{path} HTTP/1.1\r\n#{@fixed_headers}#{head(headers)}" \
               "Content-Length: #{body.bytesize}\r\n\r\n"
        conn = checkout
        begin
          response = conn.request(head, body)
        rescue TransportError => e
          raise unless e.before_response && conn.reused

          conn = Connection.new(self)
          response = conn.request(head, body)
        end
        checkin(conn)
        response
      rescue TransportError => e
        raise Error, e.message
      end

      private

      def head(headers)
        headers.map { |name, value| "#{name}: #{value}\r\n" }.join
      end

      def checkout
        conn = @mutex.synchronize { @idle.pop }
        if conn
          conn.reused = true
          conn
        else
          Connection.new(self)
        end
      end

      def checkin(conn)
        return if conn.closed?

        keep = @mutex.synchronize { @idle.size < MAX_IDLE && @idle.push(conn) }
        conn.close unless keep
      end
    end
  end
end
