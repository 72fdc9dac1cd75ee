# The hierad shim's HTTP side, shared by the Hiera 3 backend and the Hiera 5
# functions: the wire codec (JSON plus hierad's type tags), a lean
# keep-alive HTTP/1.1 client with failover, timeouts, credentials and TLS,
# and the mapping of the server's answers to Ruby values and exceptions.
#
# Ruby standard library only (socket, openssl, json), so it runs under MRI
# 3.x and Puppet Server's JRuby without gems.
require 'json'
require 'socket'
require 'io/wait'

module PuppetX
  module Hierad
    # The server could not be reached or did not answer as a hierad server
    # does. The message always names the server(s) tried.
    class Error < StandardError; end

    # Values on the wire (src/wire.rs): plain JSON, plus tagged objects for
    # Symbols, NaN/Infinity and Hashes with non-String keys.
    module Wire
      TAG = '__hierad__'.freeze
      TAG_JSON = '"__hierad__"'.freeze

      module_function

      # Wire JSON text -> Ruby value.
      def load(text)
        value = JSON.parse(text)
        # Most answers carry no tag: skip the walk then.
        text.include?(TAG_JSON) ? decode(value) : value
      end

      # Parsed wire JSON -> Ruby value.
      def decode(value)
        case value
        when Array
          value.map { |v| decode(v) }
        when Hash
          tag = value[TAG]
          return value.each_with_object({}) { |(k, v), h| h[k] = decode(v) } if tag.nil?

          case tag
          when 'sym' then value.fetch('name').to_sym
          when 'float' then float(value.fetch('value'))
          when 'hash'
            value.fetch('pairs').each_with_object({}) { |(k, v), h| h[decode(k)] = decode(v) }
          else raise Error, "hierad sent an unknown tagged value: #{value.inspect[0, 200]}"
          end
        else
          value
        end
      end

      def float(text)
        case text
        when 'NaN' then Float::NAN
        when 'Infinity' then Float::INFINITY
        when '-Infinity' then -Float::INFINITY
        else raise Error, "hierad sent an unknown float: #{text.inspect}"
        end
      end

      # Ruby value -> a structure JSON.generate writes as wire JSON.
      def encode(value)
        case value
        when nil, true, false, String, Integer then value
        when Float then value.finite? ? value : { TAG => 'float', 'value' => float_name(value) }
        when Symbol then { TAG => 'sym', 'name' => value.to_s }
        when Array then value.map { |v| encode(v) }
        when Hash
          if value.each_key.all? { |k| k.is_a?(String) && k != TAG }
            value.each_with_object({}) { |(k, v), h| h[k] = encode(v) }
          else
            { TAG => 'hash', 'pairs' => value.map { |k, v| [encode(k), encode(v)] } }
          end
        else
          # Objects a Puppet scope may hold: Hiera would interpolate their text.
          value.to_s
        end
      end

      def float_name(f)
        if f.nan? then 'NaN'
        elsif f.positive? then 'Infinity'
        else '-Infinity'
        end
      end

      # Ruby value -> wire JSON text.
      def dump(value)
        state.generate(plain?(value) ? value : encode(value))
      end

      # A String as JSON text; most keys and level names need no escapes.
      def string(text)
        text.ascii_only? && !text.match?(NEEDS_ESCAPE) ? "\"#{text}\"" : state.generate(text)
      end

      NEEDS_ESCAPE = /["\\\x00-\x1f]/.freeze

      # A generator state per thread: JSON.generate builds one per call,
      # which costs more than encoding a small request.
      def state
        Thread.current[:hierad_json_state] ||= JSON::State.new
      end

      # Can JSON.generate write it as it is (no tags needed)?
      def plain?(value)
        case value
        when nil, true, false, String, Integer then true
        when Float then value.finite?
        when Array then value.all? { |v| plain?(v) }
        when Hash then value.all? { |k, v| k.is_a?(String) && k != TAG && plain?(v) }
        else false
        end
      end
    end

    # One HTTP response.
    Response = Struct.new(:status, :headers, :body) do
      # The `message` of hierad's JSON error bodies, or the raw text.
      def error_message
        parsed = JSON.parse(body)
        parsed.is_a?(Hash) && parsed['message'] ? parsed['message'] : body
      rescue JSON::ParserError
        body.to_s.strip[0, 300]
      end

      def error_kind
        parsed = JSON.parse(body)
        parsed.is_a?(Hash) ? parsed['error'] : nil
      rescue JSON::ParserError
        nil
      end
    end

    # Failures of one connection; the client turns them into failover.
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
        ssl.post_connection_check(ep.host) if ep.verify?
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
        m = URL.match(url.to_s)
        raise Error, "hierad: url #{url.inspect} is not an http:// or https:// URL (http://host:port)" unless m

        @url = url.to_s.chomp('/')
        @tls = m[1] == 'https'
        default_port = @tls ? 443 : 80
        @host = m[2].delete_prefix('[').delete_suffix(']')
        @port = m[3] ? m[3].to_i : default_port
        @base_path = m[4].to_s.chomp('/')
        @connect_timeout = options.fetch(:connect_timeout)
        @read_timeout = options.fetch(:read_timeout)
        @ca_file = options[:ca_file]
        @verify = options.fetch(:verify, true)
        host_header = (@port == default_port ? m[2] : "#{m[2]}:#{@port}")
        @fixed_headers = "Host: #{host_header}\r\nUser-Agent: hierad-shim\r\nAccept: application/json\r\n#{options[:auth_header]}"
        @idle = []
        @mutex = Mutex.new
      end

      def tls?
        @tls
      end

      def verify?
        @verify
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
          ctx.set_params(verify_mode: @verify ? OpenSSL::SSL::VERIFY_PEER : OpenSSL::SSL::VERIFY_NONE, cert_store: store)
          ctx
        end
      end

      # One request; retried once on a fresh connection when a reused one
      # turns out to have been closed by the server meanwhile.
      def request(method, path, body, headers)
        head = "#{method} #{@base_path}#{path} HTTP/1.1\r\n#{@fixed_headers}#{headers}" \
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
      end

      def close_all
        @mutex.synchronize do
          @idle.each(&:close)
          @idle.clear
        end
      end

      private

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

    # The client of one hierad service: one or more URLs tried in order
    # (the last one that answered first), with credentials and timeouts.
    class Client
      DEFAULTS = { connect_timeout: 2.0, read_timeout: 10.0 }.freeze

      attr_reader :urls

      # Options (String or Symbol keys): url (String or Array), token, user,
      # password, ca_file, connect_timeout, read_timeout.
      def initialize(options)
        opts = {}
        options.each { |k, v| opts[k.to_sym] = v }
        urls = Array(opts[:url] || opts[:urls]).flatten.map(&:to_s).reject(&:empty?)
        raise Error, 'hierad: no server url configured (set url: to one URL or a list)' if urls.empty?

        settings = {
          connect_timeout: number(opts, :connect_timeout),
          read_timeout: number(opts, :read_timeout),
          ca_file: opts[:ca_file],
          auth_header: auth_header(opts)
        }
        @endpoints = urls.map { |u| Endpoint.new(u, settings) }
        @urls = @endpoints.map(&:url)
        @preferred = 0
      end

      def get(path, headers = '')
        request('GET', path, '', headers)
      end

      def post(path, body)
        request('POST', path, body, "Content-Type: application/json\r\n")
      end

      # Tries each URL (from the one that last answered) until one answers
      # with anything but a 5xx; raises Error naming every URL tried.
      def request(method, path, body, headers)
        failures = []
        start = @preferred
        @endpoints.size.times do |i|
          index = (start + i) % @endpoints.size
          endpoint = @endpoints[index]
          begin
            response = endpoint.request(method, path, body, headers)
          rescue TransportError => e
            failures << "#{endpoint.url}: #{e.message}"
            next
          end
          if response.status >= 500
            failures << "#{endpoint.url}: HTTP #{response.status}: #{response.error_message}"
            next
          end
          @preferred = index
          return response
        end
        raise Error, "hierad: no server answered #{method} #{path} (#{failures.join('; ')})"
      end

      def close
        @endpoints.each(&:close_all)
      end

      private

      def number(opts, name)
        value = opts[name]
        return DEFAULTS.fetch(name) if value.nil?

        Float(value)
      rescue ArgumentError, TypeError
        raise Error, "hierad: #{name} must be a number of seconds, not #{value.inspect}"
      end

      def auth_header(opts)
        if opts[:token]
          "Authorization: Bearer #{opts[:token]}\r\n"
        elsif opts[:user]
          "Authorization: Basic #{["#{opts[:user]}:#{opts[:password]}"].pack('m0')}\r\n"
        else
          ''
        end
      end
    end

    # Percent-encoding for URL paths and query strings (no `uri`, see above).
    module Escape
      module_function

      # One path segment or query value: all but RFC 3986 unreserved bytes.
      def component(text)
        text.to_s.b.gsub(/[^A-Za-z0-9\-._~]/n) { |c| format('%%%02X', c.ord) }
      end

      # A path whose '/' are kept (resource names contain them).
      def path(text)
        text.to_s.split('/', -1).map { |s| component(s) }.join('/')
      end
    end

    # Helpers for turning server answers into Ruby exceptions.
    module Errors
      module_function

      # The Ruby exception Hiera itself would have raised: the server names
      # its class and gives its message.
      def hiera_exception(klass_name, message)
        klass = begin
          klass_name.to_s.split('::').inject(Object) { |mod, name| mod.const_get(name, false) }
        rescue NameError
          nil
        end
        error = klass.is_a?(Class) && klass <= Exception ? exception_of(klass, message) : RuntimeError.new("#{klass_name}: #{message}")
        # A backtrace of text lines: Ruby's error_highlight then leaves the
        # message alone (it would point at the shim's `raise`).
        error.set_backtrace(caller(1))
        error
      end

      # Not klass.new(message): constructors add to the message
      # (SystemCallError's "unknown error - ", Psych 3's DisallowedClass) or
      # want other arguments (Psych::SyntaxError); the server's message is
      # already the one Hiera printed.
      def exception_of(klass, message)
        error = klass.allocate.exception(message)
        return error if error.message == message

        # JRuby derives SystemCallError messages from errno whatever is set.
        error.define_singleton_method(:message) { message }
        error.define_singleton_method(:to_s) { message }
        error
      end
    end
  end
end
