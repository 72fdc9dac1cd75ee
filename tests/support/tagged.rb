# Converts Ruby objects to and from the tagged JSON the Rust tests use, so a
# value can cross between Ruby and Rust with every type distinction intact:
#   nil -> ["nil"]   true/false -> ["true"]/["false"]   Integer -> ["int", "123"]
#   Float -> ["float", "1.5" | "NaN" | "Infinity" | "-Infinity"]
#   String -> ["str", "..."]   Symbol -> ["sym", "name"]
#   Array -> ["arr", [...]]    Hash -> ["hash", [[k, v], ...]]   (order kept)
# Anything else (Date, Time, objects) -> ["other", "<Class>"].
require 'json'

module Tagged
  module_function

  def encode(obj)
    case obj
    when nil then ['nil']
    when true then ['true']
    when false then ['false']
    when Integer then ['int', obj.to_s]
    when Float then ['float', obj.nan? ? 'NaN' : obj.infinite? ? (obj > 0 ? 'Infinity' : '-Infinity') : obj.to_s]
    when String then ['str', obj.dup.force_encoding('UTF-8').scrub]
    when Symbol then ['sym', obj.to_s]
    when Array then ['arr', obj.map { |v| encode(v) }]
    when Hash then ['hash', obj.map { |k, v| [encode(k), encode(v)] }]
    else ['other', obj.class.name]
    end
  end

  def decode(t)
    case t[0]
    when 'nil' then nil
    when 'true' then true
    when 'false' then false
    when 'int' then Integer(t[1])
    when 'float'
      case t[1]
      when 'NaN' then Float::NAN
      when 'Infinity' then Float::INFINITY
      when '-Infinity' then -Float::INFINITY
      else Float(t[1])
      end
    when 'str' then t[1]
    when 'sym' then t[1].to_sym
    when 'arr' then t[1].map { |v| decode(v) }
    when 'hash' then t[1].each_with_object({}) { |(k, v), h| h[decode(k)] = decode(v) }
    else raise ArgumentError, "unknown tag #{t[0].inspect}"
    end
  end
end
