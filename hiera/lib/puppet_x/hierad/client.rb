# The HTTP client of the hierad shim: failover over several URLs,
# timeouts, token, Basic or Keystone credentials, TLS with a CA file and
# a client certificate (a Puppet master's own: cert_file/key_file), keep-alive
# connections shared safely between threads (connection.rb).
require_relative 'connection'

module PuppetX::Hierad
  # The client of one hierad service: one or more URLs tried in order
  # (the last one that answered first), with credentials and timeouts.
  class Client
    # Credentials read from a file (its first line), so that hiera.yaml,
    # which every user of the machine may read, holds no secret.
    SECRET_FILES = { token_file: :token, password_file: :password, keystone_token_file: :keystone_token }.freeze
    DEFAULTS = { connect_timeout: 2.0, read_timeout: 10.0 }.freeze
    OPTIONS = (%i[url token user password keystone_token ca_file cert_file key_file] + SECRET_FILES.keys + DEFAULTS.keys).freeze
    # A data source's settings: the :hierad: section of a Hiera 3
    # hiera.yaml, the options of a Hiera 5 hierarchy entry.
    SETTINGS = (OPTIONS + %i[environment level failure generation tag]).freeze

    @shared = {}
    @mutex = Mutex.new

    # One client per server configuration, shared by every lookup in
    # this Ruby, and so are its keep-alive sessions.
    def self.shared(options)
      options = options.to_h { |k, v| [k.to_sym, v] }.slice(*OPTIONS)
      @mutex.synchronize { @shared[options] ||= new(options) }
    end

    # What is wrong with a data source's `settings` (Symbol keys), calling
    # each a `what` ('setting', 'option'); nil when nothing is.
    def self.problem(settings, what)
      unknown = settings.keys - SETTINGS
      env, level, generation = settings.values_at(:environment, :level, :generation)
      failure = settings.fetch(:failure, 'error').to_s
      if !unknown.empty? then "unknown #{what}(s) #{unknown.join(', ')} (known: #{SETTINGS.join(', ')})"
      elsif settings[:url].nil? then "#{what} url is required (one hierad URL or a list)"
      elsif env.to_s.empty? then "#{what} environment is required (a hierad environment)"
      elsif ![String, Integer].include?(env.class) then "#{what} environment must be a String (a %{} template) or an Integer, not #{env.class}"
      elsif !level.nil? && !level.is_a?(String) then "#{what} level must be a String (a %{} template), not #{level.class}"
      elsif !%w[error stale].include?(failure) then "#{what} failure must be error or stale, not #{failure.inspect}"
      elsif generation && settings[:tag] then "give #{what} generation or tag, not both"
      elsif !generation.nil? && !(generation.is_a?(Integer) && generation >= 0) then "#{what} generation is a generation number, not #{generation.inspect}"
      end
    end

    attr_reader :urls

    # OPTIONS, with String or Symbol keys.
    def initialize(options)
      @options = options = options.to_h { |k, v| [k.to_sym, v] }
      check(options)
      @secrets = read_secrets
      settings = DEFAULTS.keys.to_h { |name| [name, seconds(name)] }.merge(options.slice(:ca_file, :cert_file, :key_file), headers: headers(@secrets))
      @endpoints = Array(options[:url]).flatten.map(&:to_s).reject(&:empty?).map { |u| Endpoint.new(u, settings) }
      raise Error, 'hierad: no server url configured (set url: to one URL or a list)' if @endpoints.empty?

      @urls = @endpoints.map(&:url)
      @preferred, @mutex = 0, Mutex.new
    end

    def get(path, headers = {})
      request('GET', path, '', headers)
    end

    # A JSON `body` sent with `method` (POST, or PUT: the upload type's
    # node scopes, puppet/lib/puppet_x/hierad_resources/upload.rb).
    def post(path, body, method = 'POST')
      request(method, path, body, 'Content-Type' => 'application/json')
    end

    # The JSON of a 200 answer to a GET, or to a POST of `body`; Error
    # naming the refusal otherwise.
    def json(path, body = nil)
      response = body ? post(path, body) : get(path)
      raise refused("#{body ? 'POST' : 'GET'} #{path}", response) unless response.status == 200

      JSON.parse(response.body)
    end

    # The Error for an answer the caller cannot use.
    def refused(what, response)
      Error.new("hierad: #{urls.join(', ')}: #{what}: HTTP #{response.status}: #{response.error_message}").tap { |e| e.status, e.body = response.status, response.error }
    end

    private

    def check(options)
      raise Error, 'hierad: cert_file and key_file go together (a Puppet master: its hostcert and hostprivkey)' if options[:cert_file].nil? != options[:key_file].nil?

      # OpenSSL reads these itself, and would wait forever on a FIFO.
      %i[ca_file cert_file key_file].each { |o| raise Error, "hierad: #{o} #{options[o]} is not a regular file" if File.exist?(options[o].to_s) && !File.file?(options[o].to_s) }
      SECRET_FILES.each { |file, value| raise Error, "hierad: give #{value} or #{file}, not both" if options[file] && options[value] }
      raise Error, 'hierad: password_file goes with user' if options[:password_file] && !options[:user]
    end

    # A 401 to credentials read from files that changed since (rotated)
    # is sent once more with the new ones. A 429 (hierad's login
    # throttle) or a 503 from every server (busy) whose Retry-After is
    # within the read timeout is waited for once: a Puppet run is slowed,
    # not failed.
    def request(method, path, body, headers)
      sent = @secrets
      response = request_any(method, path, body, headers)
      wait = [429, 503].include?(response.status) && retry_after(response)
      response = request_any(method, path, body, headers) if wait && sleep(wait) # sleep answers the seconds slept
      response.status == 401 && rotated?(sent) ? request_any(method, path, body, headers) : response
    end

    def retry_after(response)
      wait = Integer(response.headers['retry-after'].to_s, 10, exception: false)
      wait if wait&.positive? && wait <= seconds(:read_timeout)
    end

    # Whether the files now hold other credentials than `sent`; if so,
    # every endpoint sends the new ones from now on.
    def rotated?(sent)
      fresh = read_secrets
      return false if sent.empty? || fresh == sent

      @mutex.synchronize do
        next if fresh == @secrets # another thread met the 401 too

        # The headers first: a request that reads the new @secrets as
        # what it sends must send them.
        @endpoints.each { |e| e.headers = headers(fresh) }
        @secrets = fresh
      end
      true
    end

    # {token: …} and the like, from the files named (first line). NONBLOCK:
    # a FIFO opens at once, to be refused, instead of holding Puppet's thread.
    def read_secrets
      SECRET_FILES.each_with_object({}) do |(file, value), out|
        next unless (path = @options[file])

        line = File.open(path.to_s, File::RDONLY | File::NONBLOCK) do |f|
          raise Error, "hierad: #{file} #{path} is not a regular file" unless f.stat.file?

          f.gets.to_s.chomp
        end
        raise Error, "hierad: #{file} #{path} is empty" if line.empty?

        out[value] = line
      rescue SystemCallError, IOError => e
        raise Error, "hierad: cannot read #{file} #{path}: #{e.message.sub(/ @ .*/m, '')}"
      end
    end

    # Tries each URL (from the one that last answered) until one answers
    # with anything but a 5xx; raises Error naming every URL tried, but
    # gives back a 503 with a Retry-After worth waiting for.
    def request_any(method, path, body, headers)
      failures, busy = [], nil
      @endpoints.rotate(@preferred).each_with_index do |endpoint, i|
        response = endpoint.request(method, path, body, headers)
        return response.tap { @preferred = (@preferred + i) % @endpoints.size } if response.status < 500

        failures << "#{endpoint.url}: HTTP #{response.status}: #{response.error_message}"
        busy ||= response if response.status == 503 && retry_after(response)
      rescue Error => e
        failures << "#{endpoint.url}: #{e.message}"
      end
      busy or raise Error, "hierad: no server answered #{method} #{path} (#{failures.join('; ')})"
    end

    def seconds(name)
      value = @options[name]
      value.nil? ? DEFAULTS.fetch(name) : Float(value)
    rescue ArgumentError, TypeError
      raise Error, "hierad: #{name} must be a number of seconds, not #{value.inspect}"
    end

    def headers(secrets)
      o = @options.merge(secrets)
      basic = o[:user] && "Basic #{["#{o[:user]}:#{o[:password]}"].pack('m0')}"
      { 'User-Agent' => 'hierad-shim', 'Accept' => 'application/json',
        'Authorization' => o[:token] ? "Bearer #{o[:token]}" : basic, 'X-Auth-Token' => o[:keystone_token]&.to_s }.compact
    end
  end

  # Percent-encoding for URL paths and query strings (no `uri`: loading
  # it costs a one-shot `hiera` run ~20 ms).
  module Escape
    # One path segment or query value: all but RFC 3986 unreserved bytes;
    # `keep` '/' in a path (resource names contain them).
    def self.component(text, keep = '')
      text.to_s.b.gsub(%r{[^A-Za-z0-9\-._~#{keep}]}n) { |c| format('%%%02X', c.ord) }
    end
  end
end
